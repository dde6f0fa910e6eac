import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging
import NIOCore

/// An error as an RFC 9457 problem document (`application/problem+json`): the status, a
/// title, what happened in words, and one entry per field that was wrong. It never holds a
/// stack, SQL or a secret: unexpected errors are logged and described in general words.
struct Problem: Error, Sendable {
    /// One field that was wrong, named as in the request body (or the query).
    struct FieldError: Sendable, Encodable, Equatable {
        let field: String
        let detail: String
    }

    let status: HTTPResponse.Status
    let title: String
    let detail: String
    var errors: [FieldError] = []
    var headers: HTTPFields = [:]
    /// For a refused transition: the activity's status and what it allows.
    var currentStatus: ActivityStatus?
    var allowedActions: [ActivityAction]?

    init(_ status: HTTPResponse.Status, _ title: String, detail: String, errors: [FieldError] = []) {
        self.status = status
        self.title = title
        self.detail = detail
        self.errors = errors
    }

    /// `type`: a stable name for the kind of problem, per status.
    var type: String { "https://herald.invalid/problems/\(status.code)" }

    /// A 401 for credentials that were presented and refused (`error="invalid_token"`).
    static func unauthorized(_ detail: String) -> Problem {
        var problem = Problem(.unauthorized, "Not authenticated", detail: detail)
        problem.headers[.wwwAuthenticate] = #"Bearer realm="herald", error="invalid_token""#
        return problem
    }

    /// A 401 for a request that presented no credentials: RFC 6750 §3.1 gives it no error code.
    static func noCredentials(_ detail: String) -> Problem {
        var problem = Problem(.unauthorized, "Not authenticated", detail: detail)
        problem.headers[.wwwAuthenticate] = #"Bearer realm="herald""#
        return problem
    }

    /// A 429 with `Retry-After` in whole seconds (at least 1).
    static func tooManyRequests(_ detail: String, wait: Duration) -> Problem {
        var problem = Problem(.tooManyRequests, "Too many requests", detail: detail)
        problem.headers[.retryAfter] = wait.retryAfterSeconds
        return problem
    }

    /// A 429 for an address over its share of requests without valid credentials.
    static func tooManyAttempts(_ wait: Duration) -> Problem {
        tooManyRequests("too many requests without valid credentials came from this address; retry after the time Retry-After says", wait: wait)
    }

    /// A 503 the database's state caused, with `Retry-After` in seconds: nothing was saved, or
    /// whether it was cannot be told (the detail says which).
    static func unavailable(_ title: String, _ detail: String, retryAfter seconds: Int) -> Problem {
        var problem = Problem(.serviceUnavailable, title, detail: detail)
        problem.headers[.retryAfter] = String(seconds)
        return problem
    }

    static func notFound(_ detail: String = "there is nothing here") -> Problem {
        Problem(.notFound, "Not found", detail: detail)
    }
}

extension Problem {
    /// The problem an error becomes: workflow refusals by their code, input by its field,
    /// Hummingbird's own errors by their status; anything else is a 500 whose details stay
    /// in the log.
    init(_ error: any Error, logger: Logger) {
        switch error {
        case let problem as Problem:
            self = problem
        case let error as StoreError:
            self = Problem(store: error)
        case let error as InputError:
            self =
                error.field.map {
                    Problem(.unprocessableContent, "Invalid fields", detail: error.description, errors: [.init(field: $0, detail: error.description)])
                }
                ?? Problem(.unprocessableContent, "Invalid input", detail: error.description)
        case let error as AuthenticationFailure:
            self = .unauthorized(error.description)
        case is NIOTooManyBytesError:
            self = Problem(.contentTooLarge, "Body too large", detail: "a request body may be at most 64 KiB")
        case _ where Store.isCommitOutcomeUnknown(error):
            logger.error("the database connection was lost during COMMIT", metadata: ["error": "\(error)"])
            self = .unavailable(
                "Outcome unknown",
                "the database connection was lost while the change was being saved, and whether it was saved cannot be told; "
                    + "look before retrying, or retry with the same Idempotency-Key", retryAfter: 2)
        case _ where Store.isUnreachable(error):
            logger.warning("the database is unreachable", metadata: ["error": "\(error)"])
            self = .unavailable(
                "Database unavailable",
                "the database cannot be reached (a failover may be under way); nothing was saved: retry after the time Retry-After says",
                retryAfter: 2)
        case _ where Store.isShortOfResources(error):
            logger.warning("the database is short of resources", metadata: ["error": "\(error)"])
            self = .unavailable(
                "Database short of resources",
                "the database refused the work for want of disk, memory or connections; nothing was saved: retry after the time Retry-After says",
                retryAfter: 5)
        case let error as HTTPError:
            self = Problem(error.status, error.status.reasonPhrase, detail: error.body ?? error.status.reasonPhrase.lowercased())
        default:
            logger.error("unexpected error answering a request", metadata: ["error": "\(String(reflecting: error))"])
            self = Problem(.internalServerError, "Internal error", detail: "something went wrong on the server; its log says what")
        }
    }

    private init(store error: StoreError) {
        switch error.code {
        case .notFound: self = .notFound(error.description)
        case .forbidden: self = Problem(.forbidden, "Not allowed", detail: error.description)
        case .invalidTransition:
            self = Problem(.conflict, "Not allowed from this status", detail: error.description)
            currentStatus = error.currentStatus
            allowedActions = error.allowedActions
        case .conflict, .alreadyExists: self = Problem(.conflict, "Conflict", detail: error.description)
        case .stale: self = Problem(.preconditionFailed, "Out of date", detail: error.description)
        default: self = Problem(.unprocessableContent, "Not possible", detail: error.description)
        }
    }
}

extension Problem: Encodable {
    enum CodingKeys: String, CodingKey {
        case type, title, status, detail, errors, currentStatus, allowedActions
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(title, forKey: .title)
        try container.encode(status.code, forKey: .status)
        try container.encode(detail, forKey: .detail)
        if !errors.isEmpty { try container.encode(errors, forKey: .errors) }
        try container.encodeIfPresent(currentStatus?.rawValue, forKey: .currentStatus)
        try container.encodeIfPresent(allowedActions?.map(\.rawValue), forKey: .allowedActions)
    }
}

extension Problem: HTTPResponseError {
    /// As the API's other answers.
    private static let encoder = HeraldJSONEncoder()

    func response(from request: Request, context: some RequestContext) throws -> Response {
        response()
    }

    func response() -> Response {
        var headers = self.headers
        headers[.contentType] = "application/problem+json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The document's JSON.
    var body: Data {
        (try? Self.encoder.encode(self)) ?? Data(#"{"title":"Internal error","status":500}"#.utf8)
    }
}

/// Turns every error thrown below it (routes, authentication, Hummingbird's own 404 and 405)
/// into a problem document.
struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return Problem(error, logger: logger).response()
        }
    }
}
