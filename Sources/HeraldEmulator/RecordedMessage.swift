import Foundation

/// A message the emulator accepted, as it received it.
public struct RecordedMessage: Sendable, Codable, Equatable {
    public let id: String
    /// `fcm` or `apns`.
    public let provider: String
    /// The device's token, or its installation id (`address` is then `fid`).
    public let token: String
    /// `token` or `fid`: how the request addressed the device.
    public let address: String
    public let title: String?
    public let body: String?
    /// The request body exactly as sent.
    public let payload: String
    /// The APNs headers (topic, push type, …); empty for FCM.
    public let headers: [String: String]
    public let receivedAt: Date
    /// `2` or `1.1`.
    public let httpVersion: String

    public init(
        id: String, provider: String, token: String, address: String = "token", title: String?, body: String?, payload: String,
        headers: [String: String], receivedAt: Date, httpVersion: String
    ) {
        self.id = id
        self.provider = provider
        self.token = token
        self.address = address
        self.title = title
        self.body = body
        self.payload = payload
        self.headers = headers
        self.receivedAt = receivedAt
        self.httpVersion = httpVersion
    }
}

extension RecordedMessage {
    /// Only what benchmarks look at: the token and when it arrived.
    var lean: RecordedMessage {
        RecordedMessage(
            id: id, provider: provider, token: token, address: address, title: nil, body: nil, payload: "", headers: [:], receivedAt: receivedAt,
            httpVersion: httpVersion)
    }
}

extension RecordedMessage {
    /// The message as listed to a person: its token shortened by `shorten` wherever it
    /// appears, the payload's copy included.
    public func redactingToken(_ shorten: (String) -> String) -> RecordedMessage {
        let shown = shorten(token)
        return RecordedMessage(
            id: id, provider: provider, token: shown, address: address, title: title, body: body,
            payload: token.isEmpty ? payload : payload.replacingOccurrences(of: token, with: shown), headers: headers,
            receivedAt: receivedAt, httpVersion: httpVersion)
    }
}
