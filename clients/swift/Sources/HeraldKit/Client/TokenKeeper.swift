import Foundation

/// Where a client gets its token (README.md, "Tokens that change"): asked at the first request
/// when the configuration gives none, and again with the refused token whenever the server
/// answers 401 (a token revoked, expired, or replaced by the app's backend). Throwing ends what
/// asked: the request fails with the server's 401, and a live session ends `.unauthorized`.
public typealias TokenProvider = @Sendable (_ refused: String?) async throws -> String

/// The token a client sends now, renewed once for however many requests were refused with it.
actor TokenKeeper {
    private let provider: TokenProvider?
    private var token: String?
    private var renewing: Task<String, any Error>?

    init(token: String?, provider: TokenProvider?) {
        self.token = token.flatMap { $0.isEmpty ? nil : $0 }
        self.provider = provider
    }

    /// Whether a refused token can be replaced.
    nonisolated var renews: Bool { provider != nil }

    /// The token to send (asking the provider the first time, when none was given).
    func current() async throws -> String {
        if let token { return token }
        return try await renew(refused: nil)
    }

    /// A token other than `refused`: the one another caller already got, or the provider's.
    /// - Throws: what the provider threw; `HeraldError.unauthorized` when there is none.
    func renew(refused: String?) async throws -> String {
        if let token, token != refused { return token }
        if let renewing { return try await renewing.value }
        guard let provider else {
            throw HeraldError.unauthorized(Problem(status: 401, title: "Unauthorized", detail: "no token, and no provider to ask"))
        }
        let task = Task { try await provider(refused) }
        renewing = task
        defer { renewing = nil }
        let renewed = try await task.value
        token = renewed
        return renewed
    }
}
