import Foundation

/// An RFC 9457 problem document, as Herald answers every refused request.
public struct Problem: Codable, Sendable, Hashable, Error {
    public struct FieldError: Codable, Sendable, Hashable {
        public var field: String
        public var detail: String
    }
    public var type: String
    public var title: String
    public var status: Int
    public var detail: String
    /// A 422's fields, each with what is wrong with it.
    public var errors: [FieldError]?
    /// A 409's transition: the activity's status now, and what may be done from it.
    public var currentStatus: String?
    public var allowedActions: [String]?

    public init(status: Int, title: String, detail: String) {
        self.type = "about:blank"
        self.title = title
        self.status = status
        self.detail = detail
    }
}

/// Why no answer came: said in words, with the error the transport threw when there was one.
/// Two are equal when they say the same.
public struct TransportFailure: Error, Sendable, Hashable, CustomStringConvertible, ExpressibleByStringInterpolation {
    public var description: String
    public var underlying: (any Error & Sendable)?

    public init(_ description: String, underlying: (any Error & Sendable)? = nil) {
        self.description = description
        self.underlying = underlying
    }

    public init(stringLiteral value: String) { self.init(value) }

    public init(stringInterpolation: DefaultStringInterpolation) { self.init(String(stringInterpolation: stringInterpolation)) }

    public static func == (left: TransportFailure, right: TransportFailure) -> Bool { left.description == right.description }
    public func hash(into hasher: inout Hasher) { hasher.combine(description) }
}

/// What a call to Herald can fail with: the server's answers typed by what an app does next.
public enum HeraldError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 401: the credential is missing, wrong, revoked or expired: sign in again. A live
    /// session ends with this and does not reconnect.
    case unauthorized(Problem)
    /// 403: the caller may not do this.
    case forbidden(Problem)
    /// 404: no such thing that the caller may see.
    case notFound(Problem)
    /// 409: not allowed from the current state (an activity's `currentStatus` and
    /// `allowedActions`), or the same idempotent request still in flight.
    case conflict(Problem)
    /// 412: the activity changed since the version the app showed (a push's `version`): show it again.
    case versionConflict(Problem)
    /// 422: a field is wrong (`problem.errors` names each).
    case invalid(Problem)
    /// 429: too many requests; try again after `retryAfter` seconds.
    case rateLimited(Problem, retryAfter: Int?)
    /// 503 (or another 5xx): the server cannot answer now; try again (after `retryAfter`, if given).
    case unavailable(Problem, retryAfter: Int?)
    /// Any other refusal.
    case refused(Problem)
    /// The server could not be reached, or the connection broke before an answer: what
    /// happened, and what the transport threw (`underlying`: a `URLError`, a SwiftNIO error).
    case transport(TransportFailure)
    /// An answer that is not what the API documents.
    case unexpectedAnswer(String)

    /// From a refusal's status, headers and body.
    static func from(status: Int, retryAfter: Int?, body: Data) -> HeraldError {
        let problem =
            (try? JSONCoding.decoder.decode(Problem.self, from: body))
            ?? Problem(status: status, title: "HTTP \(status)", detail: String(decoding: body.prefix(200), as: UTF8.self))
        switch status {
        case 401: return .unauthorized(problem)
        case 403: return .forbidden(problem)
        case 404: return .notFound(problem)
        case 409: return .conflict(problem)
        case 412: return .versionConflict(problem)
        case 422: return .invalid(problem)
        case 429: return .rateLimited(problem, retryAfter: retryAfter)
        case 500...599: return .unavailable(problem, retryAfter: retryAfter)
        default: return .refused(problem)
        }
    }

    /// Worth trying again later, unchanged: the network, a 429 or a 5xx.
    public var isTransient: Bool {
        switch self {
        case .transport, .rateLimited, .unavailable: true
        default: false
        }
    }

    /// Seconds the server asked to wait, if it did.
    public var retryAfter: Int? {
        switch self {
        case .rateLimited(_, let seconds), .unavailable(_, let seconds): seconds
        default: nil
        }
    }

    public var problem: Problem? {
        switch self {
        case .unauthorized(let p), .forbidden(let p), .notFound(let p), .conflict(let p), .versionConflict(let p), .invalid(let p),
            .rateLimited(let p, _), .unavailable(let p, _), .refused(let p):
            p
        case .transport, .unexpectedAnswer: nil
        }
    }

    public var description: String {
        switch self {
        case .transport(let why): "could not reach Herald: \(why)"
        case .unexpectedAnswer(let why): "unexpected answer from Herald: \(why)"
        default: problem.map { "\($0.status) \($0.title): \($0.detail)" } ?? "error"
        }
    }
}
