import Foundation

/// An OAuth access token and how long it lasts.
public struct AccessToken: Sendable, Equatable {
    public let value: String
    public let expiresAt: Date

    public init(value: String, expiresAt: Date) {
        self.value = value
        self.expiresAt = expiresAt
    }
}

/// Holds the current access token, fetching a new one `refreshMargin` before expiry, with
/// one fetch in flight however many senders wait for it.
///
/// The clock is injected so expiry can be tested. On a 401, call `invalidate(_:)` with the
/// rejected token and ask again: only the first caller with that token causes a refresh.
public actor AccessTokenCache {
    public typealias Fetch = @Sendable () async throws -> AccessToken

    private let fetch: Fetch
    private let now: @Sendable () -> Date
    private let refreshMargin: TimeInterval
    private var current: AccessToken?
    private var inFlight: Task<AccessToken, any Error>?
    /// Fetches made, for diagnostics and tests.
    public private(set) var fetches = 0

    public init(refreshMargin: Duration = .seconds(300), now: @escaping @Sendable () -> Date = { Date() }, fetch: @escaping Fetch) {
        self.fetch = fetch
        self.now = now
        self.refreshMargin = Double(refreshMargin.components.seconds)
    }

    /// A token valid for at least the refresh margin.
    public func token() async throws -> String {
        if let current, current.expiresAt.timeIntervalSince(now()) > refreshMargin { return current.value }
        if let inFlight { return try await inFlight.value.value }
        fetches += 1
        let task = Task { try await fetch() }
        inFlight = task
        do {
            let token = try await task.value
            current = token
            inFlight = nil
            return token.value
        } catch {
            inFlight = nil
            throw error
        }
    }

    /// The provider refused `value`: forget it, unless a newer token replaced it already.
    public func invalidate(_ value: String) {
        if current?.value == value { current = nil }
    }
}
