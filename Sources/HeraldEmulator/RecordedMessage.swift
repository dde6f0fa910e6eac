import Foundation

/// A message the emulator accepted, as it received it.
public struct RecordedMessage: Sendable, Codable, Equatable {
    public let id: String
    /// `fcm` or `apns`.
    public let provider: String
    public let token: String
    public let title: String?
    public let body: String?
    /// The request body exactly as sent.
    public let payload: String
    /// The APNs headers (topic, push type, …); empty for FCM.
    public let headers: [String: String]
    public let receivedAt: Date
    /// `2` or `1.1`.
    public let httpVersion: String
}

extension RecordedMessage {
    /// Only what benchmarks look at: the token and when it arrived.
    var lean: RecordedMessage {
        RecordedMessage(
            id: id, provider: provider, token: token, title: nil, body: nil, payload: "", headers: [:], receivedAt: receivedAt,
            httpVersion: httpVersion)
    }
}

extension RecordedMessage {
    /// The message as listed to a person: its token shortened by `shorten` wherever it
    /// appears, the payload's copy included.
    public func redactingToken(_ shorten: (String) -> String) -> RecordedMessage {
        let shown = shorten(token)
        return RecordedMessage(
            id: id, provider: provider, token: shown, title: title, body: body,
            payload: token.isEmpty ? payload : payload.replacingOccurrences(of: token, with: shown), headers: headers,
            receivedAt: receivedAt, httpVersion: httpVersion)
    }
}
