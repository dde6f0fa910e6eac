import Foundation
import HeraldCore
import HeraldDispatch
import HeraldEmulator
import HeraldHTTP
import HeraldPush
import HeraldRuntime
import HeraldStore
import Logging
import Synchronization

/// What every bench scenario stands on: the database, an in-process emulator, providers
/// pointed at it, and fresh tenants that are removed afterwards.
public final class BenchRig: Sendable {
    public let store: Store
    let emulator: BenchEmulator
    let gateway: ProviderGateway
    let settings: BenchSettings
    /// Where the webhooks scenario sends: the emulator's webhook receiver (`/webhooks/…`).
    let receiver: String
    /// What the rig was started with (the webhooks' sender reads its variables).
    let environment: HeraldEnvironment
    let logger: Logger
    /// This process's CPU and, when it runs here, the database server's.
    let meter: CPUMeter
    let run = String(UUID().uuidString.prefix(6).lowercased())
    let manager = "manager@bench.test"
    let created = Mutex<[Tenant]>([])
    /// What a running emulator had accepted before this run.
    private let acceptedBefore = Mutex(0)

    private init(
        store: Store, emulator: BenchEmulator, gateway: ProviderGateway, settings: BenchSettings, receiver: String,
        environment: HeraldEnvironment, meter: CPUMeter
    ) {
        self.store = store
        self.receiver = receiver
        self.environment = environment
        self.meter = meter
        self.emulator = emulator
        self.gateway = gateway
        self.settings = settings
        self.logger = environment.logger
    }

    /// A rig on the environment's database and, unless `GOOGLE_APPLICATION_CREDENTIALS` and
    /// `HERALD_FCM_ENDPOINT` point at a running emulator, an emulator of its own in this
    /// process; the bench tenants are removed when `body` ends (unless `settings.keep`).
    /// - Parameters:
    ///   - emulatorLogger: the in-process emulator's logger.
    ///   - receiver: the running emulator's base URL for webhooks (its HTTP/1.1 port); its
    ///     `HERALD_FCM_ENDPOINT` when nil. An in-process emulator's is its HTTP/1.1 port.
    public static func with<Result: Sendable>(
        _ environment: HeraldEnvironment, settings: BenchSettings, poolSize: Int = 8, emulatorLogger: Logger, receiver: String? = nil,
        _ body: @Sendable (BenchRig) async throws -> Result
    ) async throws -> Result {
        let logger = environment.logger
        let maxInFlight = settings.concurrency * settings.workers
        return try await environment.withStore(poolSize: poolSize) { store in
            let backend = try? await store.backendProcessID()
            let meter = CPUMeter(backend: backend.map(Int32.init))
            if let endpoint = environment["HERALD_FCM_ENDPOINT"], environment["GOOGLE_APPLICATION_CREDENTIALS"] != nil {
                // A running emulator (or anything FCM-like) the environment points at.
                return try await environment.withGateway(maxInFlight: maxInFlight) { gateway in
                    let emulator = BenchEmulator.remote(base: endpoint, http: gateway.http)
                    return try await BenchRig(
                        store: store, emulator: emulator, gateway: gateway, settings: settings, receiver: receiver ?? endpoint,
                        environment: environment, meter: meter
                    )
                    .running(body)
                }
            }
            var configuration = EmulatorConfiguration()
            configuration.leanRecording = true
            return try await Emulator.withRunning(configuration, logger: emulatorLogger) { emulator, endpoints in
                try await emulator.withGateway(base: endpoints.https, maxInFlight: maxInFlight, logger: logger) { gateway in
                    try await BenchRig(
                        store: store, emulator: .inProcess(emulator), gateway: gateway, settings: settings, receiver: endpoints.http1,
                        environment: environment, meter: meter
                    )
                    .running(body)
                }
            }
        }
    }

    /// Runs `body`, then removes the bench tenants (whether or not it failed).
    private func running<Result>(_ body: @Sendable (BenchRig) async throws -> Result) async throws -> Result {
        let before = await emulator.acceptedCount()
        acceptedBefore.withLock { $0 = before }
        do {
            let result = try await body(self)
            try await cleanUp()
            return result
        } catch {
            try? await cleanUp()
            throw error
        }
    }

    private func cleanUp() async throws {
        guard !settings.keep else { return }
        for tenant in created.withLock({ $0 }) {
            try await store.deleteTenant(slug: tenant.slug)
        }
    }

    func dispatcherConfiguration(_ index: Int) -> Dispatcher.Configuration {
        Dispatcher.Configuration(
            worker: "bench-\(run)-\(index)", concurrency: settings.concurrency, claimBatch: settings.batch, eventBatch: 500,
            tenants: created.withLock { $0.map(\.id) })
    }

    /// `settings.workers` dispatchers, each with its own pool, for the length of `body`.
    func withDispatchers<Result>(_ body: ([Dispatcher]) async throws -> Result) async throws -> Result {
        func adding(_ dispatchers: [Dispatcher]) async throws -> Result {
            guard dispatchers.count < settings.workers else { return try await body(dispatchers) }
            return try await Dispatcher.with(
                store: store, listen: true, gateway: gateway, configuration: dispatcherConfiguration(dispatchers.count), logger: logger
            ) { try await adding(dispatchers + [$0]) }
        }
        return try await adding([])
    }

    /// Fans out every pending event of the bench tenants (not timed with the sending).
    func fanOutEverything() async throws {
        try await withDispatchers { dispatchers in
            while try await dispatchers[0].fanOutPending() > 0 {}
        }
    }

    /// A queue that has been running has statistics; one bulk-loaded a moment ago has none
    /// until autovacuum comes by, and its plans are a lottery until then.
    /// Where PostgreSQL's log is (pg_stat_wal's bytes), or nil when it cannot be read: a
    /// measurement only, which a database that failed over mid-run must not fail.
    func walPosition() async -> Int64? {
        try? await store.serverActivity().walBytes
    }

    /// Bytes of log an item between two positions; nil when either is missing or the log
    /// went back (another server after a failover).
    static func perItem(from start: Int64?, to end: Int64?, items: Int) -> Double? {
        guard let start, let end, end >= start else { return nil }
        return Double(end - start) / Double(max(items, 1))
    }

    func analyzeQueue() async throws {
        try await store.analyze(.queue)
    }

    /// A tenant the scenario deleted itself.
    func forget(_ tenant: Tenant) {
        created.withLock { $0.removeAll { $0.id == tenant.id } }
    }

    /// What a drain did, and the CPU samples around it (taken while the workers' threads live).
    struct Drained {
        var counters = Dispatcher.Counters()
        var elapsed: Duration = .zero
        var before: CPUMeter.Sample
        var after: CPUMeter.Sample
    }

    /// Every worker drains; the counters add up.
    func drain() async throws -> Drained {
        try await withDispatchers { dispatchers in
            let before = meter.sample()
            let started = ContinuousClock.now
            let counters = try await withThrowingTaskGroup(of: Dispatcher.Counters.self) { group in
                for dispatcher in dispatchers {
                    group.addTask {
                        try await dispatcher.run(.drain(horizon: .seconds(2)))
                        return dispatcher.counters
                    }
                }
                var total = Dispatcher.Counters()
                for try await counters in group {
                    total.sent += counters.sent
                    total.retried += counters.retried
                    total.unanswered += counters.unanswered
                    total.lateAcknowledgements += counters.lateAcknowledgements
                    total.failed += counters.failed + counters.expired + counters.deadTokens
                }
                return total
            }
            return Drained(counters: counters, elapsed: started.duration(to: .now), before: before, after: meter.sample())
        }
    }

    /// Runs the workers (listening, as in production) around `body`, until `until` holds
    /// (or two minutes pass), then shuts them down.
    func withWorkers<Result: Sendable>(
        _ body: @Sendable ([Dispatcher]) async throws -> Result, until: @Sendable () async -> Bool
    ) async throws -> Result {
        try await withDispatchers { dispatchers in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for dispatcher in dispatchers { group.addTask { try await dispatcher.run(.forever) } }
                let result = try await body(dispatchers)
                let deadline = Date().addingTimeInterval(120)
                while await !until(), Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
                for dispatcher in dispatchers { dispatcher.shutdown() }
                try await group.waitForAll()
                return result
            }
        }
    }

    /// Messages the emulator accepted during this run.
    func acceptedCount() async -> Int { await emulator.acceptedCount() - acceptedBefore.withLock { $0 } }

    /// When each token's message reached the emulator.
    func arrivals() async throws -> [String: Date] { try await emulator.arrivals() }

    /// Deliveries of the bench tenants that reached an end.
    func recordedCount() async throws -> Int {
        let ids = created.withLock { $0.map(\.id) }
        return try await store.finishedDeliveries(tenants: ids)
    }
}
