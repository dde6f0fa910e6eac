import Foundation
import HeraldCore
import HeraldEmulator
import HeraldHTTP
import HeraldPostgres
import HeraldPush
import HeraldRuntime
import HeraldTemplates
import HeraldTestSupport

@testable import HeraldDispatch
@testable import HeraldStore

/// A migrated throwaway database with a tenant, a running emulator, and providers pointed
/// at it: everything a dispatcher needs, real all the way down.
struct DispatchHarness: Sendable {
    let store: Store
    let configuration: PostgresConfiguration
    let tenant: Tenant
    let emulator: Emulator
    let endpoints: Emulator.Endpoints
    let gateway: ProviderGateway

    /// - Parameter endpoint: which of the emulator's listeners the providers (and the OAuth
    ///   token endpoint) use: HTTP/1.1 by default (the in-process emulator's TLS and HTTP/2,
    ///   built for debugging, cost the suite most of its CPU), or the HTTPS or h2c one.
    ///   - sendTimeout: how long the providers wait for an answer.
    ///   - email: a relay for email (none: email is not configured).
    static func with(
        faults: EmulatorConfiguration.Faults = .init(), endpoint: KeyPath<Emulator.Endpoints, String> & Sendable = \.http1,
        sendTimeout: Duration = pushSendTimeout, email: EmulatorSMTP? = nil, _ body: @Sendable (DispatchHarness) async throws -> Void
    ) async throws {
        try await TestDatabase.withStore(poolSize: 4) { store, configuration in
            try await with(
                store: store, configuration: configuration, faults: faults, endpoint: endpoint, sendTimeout: sendTimeout, email: email, body)
        }
    }

    /// The harness on a database the caller provides (already migrated).
    static func with(
        store: Store, configuration: PostgresConfiguration, faults: EmulatorConfiguration.Faults = .init(),
        endpoint: KeyPath<Emulator.Endpoints, String> & Sendable = \.http1, sendTimeout: Duration = pushSendTimeout,
        email: EmulatorSMTP? = nil, _ body: @Sendable (DispatchHarness) async throws -> Void
    ) async throws {
        try await Emulator.withRunning(EmulatorConfiguration(faults: faults), logger: testLogger) { emulator, endpoints in
            try await emulator.withGateway(
                base: endpoints[keyPath: endpoint], maxInFlight: 256, sendTimeout: sendTimeout, email: email, logger: testLogger
            ) { gateway in
                let tenant = try await store.createTenant(slug: "acme", name: "Acme")
                try await store.withTenant(tenant) { session in
                    try await addAcmePeople(session)
                }
                let harness = DispatchHarness(
                    store: store, configuration: configuration, tenant: tenant, emulator: emulator, endpoints: endpoints, gateway: gateway)
                try await body(harness)
            }
        }
    }

    /// A dispatcher of its own (its own pool, its own worker name).
    func withDispatcher<Result>(
        _ configuration: Dispatcher.Configuration = .init(retry: RetryPolicy(base: .milliseconds(100), cap: .seconds(2))),
        listen: Bool = false, gateway: (any PushGateway)? = nil, _ body: (Dispatcher) async throws -> Result
    ) async throws -> Result {
        try await Dispatcher.with(
            store: store, listen: listen, gateway: gateway ?? self.gateway, configuration: configuration, logger: testLogger, body)
    }

    /// Runs one dispatcher until nothing is due within `horizon`.
    func drain(horizon: Duration = .seconds(5), _ configuration: Dispatcher.Configuration? = nil) async throws -> Dispatcher.Counters {
        try await withDispatcher(configuration ?? .init(retry: RetryPolicy(base: .milliseconds(100), cap: .seconds(2)))) { dispatcher in
            try await dispatcher.run(.drain(horizon: horizon))
            return dispatcher.counters
        }
    }

    func register(_ email: String, token: String, app: AppKind, platform: Platform = .android, provider: PushProvider = .fcm) async throws {
        _ = try await store.withTenant(tenant) {
            try await $0.registerDevice(email: email, token: token, app: app, platform: platform, provider: provider)
        }
    }

    /// `count` member-app devices for `email`, tokens `prefix0`, `prefix1`, … (one statement).
    func registerMany(_ email: String, count: Int, prefix: String, provider: PushProvider = .fcm) async throws {
        try await store.withTenant(tenant) { session in
            let person = try await session.person(email: email)
            try await session.connection.query(
                """
                INSERT INTO devices (tenant_id, id, person_id, token, app, platform, provider)
                SELECT \(tenant.id), gen_random_uuid(), \(person.id), \(prefix) || g, 'member', 'android', \(provider.rawValue)
                FROM generate_series(0, \(count - 1)) g
                """)
        }
    }

    func assign(
        to assignee: String = "chidi@acme.test", priority: Priority = .p0, name: String = "Ship v2", deadline: String = TestDates.deadline
    ) async throws -> ActivityRecord {
        try await store.withTenant(tenant) {
            try await $0.assignActivity(
                actor: "alice@acme.test", team: "ops", assignee: assignee, name: name, deadline: try Input.date(deadline), priority: priority)
        }
    }

    func act(_ action: ActivityAction, _ id: UUID, by email: String) async throws {
        _ = try await store.withTenant(tenant) { try await $0.act(action, on: id, actor: email) }
    }

    func history(as viewer: String = "root@acme.test", _ filter: HistoryFilter = .init(limit: 10_000)) async throws -> [HistoryEntry] {
        try await store.withTenant(tenant) { try await $0.history(viewer: viewer, filter: filter) }
    }

    /// Rows of a query on the superuser pool (sees every tenant).
    func count(_ sql: String) async throws -> Int {
        try await store.pool.query("\(unsafeRaw: sql)").single().decode(Int.self, at: 0)
    }
}
