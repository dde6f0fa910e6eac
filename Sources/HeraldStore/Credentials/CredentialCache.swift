import Foundation
import HeraldPostgres
import Synchronization

/// Who a presented secret is, remembered for a few seconds by the process that serves the
/// API, so that a request does not look its credential up in the database each time
/// (docs/api.md#credentials).
///
/// Only while `run()` runs: it listens on the store's LISTEN connection for
/// `herald_credentials`, which the database sends (with the tenant's id) when a credential is
/// revoked, its expiry changes or it is removed, and when a person's or tenant's details
/// change. A tenant's entries go when that is heard, so a revocation takes effect within the
/// notification's way here (well under a second); while the listener's connection is away,
/// an entry still lives no longer than `timeToLive` (5 s). Refusals are never remembered.
public final class CredentialCache: Sendable {
    /// The NOTIFY channel the database tells credential changes on (payload: the tenant's id).
    public static let channel = "herald_credentials"

    private let store: Store
    private let timeToLive: Double
    private let state: Mutex<CredentialCacheState>
    private let reads = Atomic<Int>(0)

    /// - Parameters:
    ///   - timeToLive: how long an entry may answer at most (tests lengthen it to show that a
    ///     change heard, not the time, drops it).
    ///   - capacity: entries at most; past it, secrets are looked up each time.
    public init(store: Store, timeToLive: Duration = .seconds(5), capacity: Int = 100_000) {
        self.store = store
        self.timeToLive = timeToLive.timeInterval
        self.state = Mutex(CredentialCacheState(capacity: capacity))
    }

    /// `Store.authenticate`, answered from the cache when it may be.
    /// - Throws: `AuthenticationFailure`.
    public func authenticate(_ presented: String) async throws -> Authentication {
        guard let secret = CredentialSecret(parsing: presented) else { throw AuthenticationFailure.unknown }
        let key = secret.sha256
        let (cached, generation) = state.withLock { ($0.lookup(key, now: Self.uptime), $0.generation) }
        if let cached { return cached }
        reads.add(1, ordering: .relaxed)
        let authentication = try await store.authenticate(presented)
        let expiresIn = authentication.expiresAt.map { $0.timeIntervalSinceNow }
        state.withLock {
            $0.keep(authentication, for: key, readAt: generation, now: Self.uptime, timeToLive: timeToLive, expiresIn: expiresIn)
        }
        return authentication
    }

    /// Drops `tenant`'s entries now (a change this process made itself: it need not wait to
    /// hear of it).
    public func forget(tenant: UUID) {
        update { $0.changed(tenant: tenant) }
    }

    /// Whether the listener is connected (changes are heard), away, or not running.
    var listening: CredentialCacheState.Listening { state.withLock { $0.listening } }

    /// Listens for changes until cancelled; the cache answers only meanwhile.
    public func run() async {
        await run(on: store.notifier)
    }

    /// `run()` on another LISTEN connection (tests cut it by giving one that cannot connect).
    func run(on notifier: PostgresNotifier) async {
        let listener = notifier.listen(to: [Self.channel])
        await withTaskCancellationHandler {
            for await event in listener.events {
                switch event {
                case .connected: update { $0.listen(.connected) }
                case .disconnected: update { $0.listen(.away) }
                case .notification(_, let payload):
                    // A payload that is not a tenant's id drops everything (never expected).
                    update { state in
                        if let tenant = UUID(uuidString: payload) { state.changed(tenant: tenant) } else { state.listen(.connected) }
                    }
                }
            }
        } onCancel: {
            listener.stop()
        }
        update { $0.listen(.off) }
    }

    /// How many secrets were looked up in the database (not answered from the cache).
    var databaseReads: Int { reads.load(ordering: .relaxed) }

    /// How many changes were heard (and connections made) so far.
    var generation: Int { state.withLock { $0.generation } }

    private func update(_ change: (inout CredentialCacheState) -> Void) {
        state.withLock { change(&$0) }
    }

    private static let origin = ContinuousClock.now

    /// Seconds since the first cache was made, on the clock that does not jump.
    private static var uptime: Double {
        let elapsed = (ContinuousClock.now - origin).components
        return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    }
}
