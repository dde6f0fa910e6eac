/// What a provider's answer means for one delivery (docs/notifications.md).
public enum DeliveryOutcome: Sendable, Equatable {
    /// Accepted; the provider's message id when it gave one.
    case delivered(messageID: String?)
    /// Try again later: after the provider's `Retry-After` when given, else by backoff.
    case retry(after: Duration?, reason: String)
    /// The request left and no answer came (a timeout, a connection lost): the provider may
    /// have taken it. Sent again once at most, then recorded as unanswered
    /// (docs/notifications.md#delivery).
    case unanswered(reason: String)
    /// The token will never work again: deactivate the device, never retry.
    case deadToken(reason: String)
    /// This request is wrong and will stay wrong; do not retry it.
    case badRequest(reason: String)
    /// The credentials expired: renew them once and send again.
    case credentialsExpired(reason: String)
    /// Herald's configuration is wrong (credentials, project, topic): stop sending, keep the
    /// work queued, and say so loudly.
    case configurationError(reason: String)
}

/// A provider's HTTP answer.
public struct ProviderResponse: Sendable, Equatable {
    public var status: Int
    /// Header names in lowercase.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.body = body
    }

    public init(status: Int, headers: [String: String] = [:], body: String) {
        self.init(status: status, headers: headers, body: Array(body.utf8))
    }
}

/// An outcome with the HTTP status it came from (`nil` when no answer arrived), for history.
public struct ProviderAnswer: Sendable, Equatable {
    public var outcome: DeliveryOutcome
    public var httpStatus: Int?

    public init(_ outcome: DeliveryOutcome, httpStatus: Int?) {
        self.outcome = outcome
        self.httpStatus = httpStatus
    }
}
