import ArgumentParser
import Foundation
import HeraldCore
import HeraldDispatch
import HeraldEmulator
import HeraldHTTP
import HeraldPostgres
import HeraldPush
import HeraldStore
import HeraldTemplates
import Logging
import Synchronization

/// What every bench scenario stands on: the database, an in-process emulator, providers
/// pointed at it, and fresh tenants that are removed afterwards.
final class BenchRig: Sendable {
    let store: Store
    let emulator: BenchEmulator
    let gateway: ProviderGateway
    let common: BenchCommand.Common
    let logger: Logger
    let run = String(UUID().uuidString.prefix(6).lowercased())
    let manager = "manager@bench.test"
    private let created = Mutex<[Tenant]>([])
    /// What a running emulator had accepted before this run.
    private let acceptedBefore = Mutex(0)

    private init(store: Store, emulator: BenchEmulator, gateway: ProviderGateway, common: BenchCommand.Common, logger: Logger) {
        self.store = store
        self.emulator = emulator
        self.gateway = gateway
        self.common = common
        self.logger = logger
    }

    static func with(_ common: BenchCommand.Common, poolSize: Int = 8, _ body: @Sendable (BenchRig) async throws -> Void) async throws {
        let logger = DemoCommand.quiet(HeraldLogging.logger, at: .warning)
        let emulatorLogger = DemoCommand.quiet(logger, at: .critical)
        let source = try DatabaseSource.resolve(logger: logger)
        let pool = try await source.openPool(size: poolSize, logger: logger)
        let store = Store(pool: pool, logger: logger)
        let environment = ProcessInfo.processInfo.environment
        do {
            if let endpoint = environment["HERALD_FCM_ENDPOINT"], !endpoint.isEmpty, environment["GOOGLE_APPLICATION_CREDENTIALS"] != nil {
                // A running emulator (or anything FCM-like) the environment points at.
                let http = try HTTPClient(
                    configuration: .init(maxInFlight: common.concurrency * common.workers, extraCAFile: environment["HERALD_CA_FILE"]),
                    logger: logger)
                defer { http.shutdown() }
                let gateway = ProviderGateway.fromEnvironment(environment, http: http)
                let rig = BenchRig(store: store, emulator: .remote(base: endpoint, http: http), gateway: gateway, common: common, logger: logger)
                try await rig.running(body)
            } else {
                var configuration = EmulatorConfiguration()
                configuration.leanRecording = true
                try await Emulator.withRunning(configuration, logger: emulatorLogger) { emulator, endpoints in
                    try await emulator.withGateway(endpoints, maxInFlight: common.concurrency * common.workers, logger: logger) { gateway in
                        let rig = BenchRig(store: store, emulator: .inProcess(emulator), gateway: gateway, common: common, logger: logger)
                        try await rig.running(body)
                    }
                }
            }
            await pool.close()
        } catch {
            await pool.close()
            throw error
        }
    }

    /// Runs `body`, then removes the bench tenants (whether or not it failed).
    private func running(_ body: @Sendable (BenchRig) async throws -> Void) async throws {
        let before = await emulator.acceptedCount()
        acceptedBefore.withLock { $0 = before }
        do {
            try await body(self)
            try await cleanUp()
        } catch {
            try? await cleanUp()
            throw error
        }
    }

    private func cleanUp() async throws {
        guard !common.keep else { return }
        for tenant in created.withLock({ $0 }) {
            try await store.deleteTenant(slug: tenant.slug)
        }
    }

    // MARK: Setting up

    /// A tenant with team `bench`: a manager and `members` members with `devicesPerMember`
    /// Android member-app devices each, written set-based.
    func makeTenant(index: Int, members: Int, devicesPerMember: Int) async throws -> Tenant {
        let tenant = try await store.createTenant(slug: "bench-\(run)-\(index)", name: "Bench \(index)")
        created.withLock { $0.append(tenant) }
        try await store.withTenant(tenant) { session in
            let team = try await session.createTeam(slug: "bench", name: "Bench")
            let boss = try await session.addPerson(email: manager, name: "Bench Manager")
            _ = try await session.setMembership(team: "bench", email: manager, role: .manager)
            let prefix = "b\(run)-\(index)-"
            try await session.connection.query(
                """
                WITH people AS (
                    INSERT INTO people (tenant_id, id, email, display_name)
                    SELECT \(tenant.id), gen_random_uuid(), 'member' || g || '@bench.test', 'Member ' || g FROM generate_series(0, \(members - 1)) g
                    RETURNING id, email
                ), memberships AS (
                    INSERT INTO team_members (tenant_id, team_id, person_id, role) SELECT \(tenant.id), \(team.id), id, 'member' FROM people
                )
                INSERT INTO devices (tenant_id, id, person_id, token, app, platform, provider)
                SELECT \(tenant.id), gen_random_uuid(), p.id, \(prefix) || split_part(split_part(p.email, '@', 1), 'member', 2) || '-' || d,
                       'member', 'android', 'fcm'
                FROM people p, generate_series(0, \(devicesPerMember - 1)) d
                """)
            _ = boss
        }
        // Fresh bulk rows have no statistics yet; production tables have (autovacuum). Without
        // them the planner joins 10,000 participants by scanning.
        try await store.pool.query("ANALYZE people, team_members, devices")
        return tenant
    }

    /// The token `makeTenant` gave member `member`'s first device.
    func token(tenant index: Int, member: Int) -> String { "b\(run)-\(index)-\(member)-0" }

    func memberEmails(_ tenant: Tenant) async throws -> [String] {
        try await store.withTenant(tenant) { session in
            try await session.connection.query(
                "SELECT email FROM people WHERE tenant_id = \(tenant.id) AND email LIKE 'member%' ORDER BY length(email), email"
            ).map { try $0.decode(String.self, at: 0) }
        }
    }

    /// One P0 activity assigned to each member (eight clients at a time).
    func assignToEveryMember(_ tenant: Tenant, count: Int) async throws {
        let members = try await memberEmails(tenant)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<8 {
                group.addTask {
                    for index in stride(from: lane, to: members.count, by: 8) {
                        _ = try await self.assign(tenant, to: members[index])
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    func assign(_ tenant: Tenant, to member: String) async throws -> ActivityRecord {
        try await store.withTenant(tenant) {
            try await $0.assignActivity(actor: manager, team: "bench", assignee: member, name: "Bench run \(run)", deadline: "2030-01-01", priority: "p0")
        }
    }

    /// A group of everyone in the tenant's team.
    func makeGroup(_ tenant: Tenant) async throws -> UUID {
        let conversation = try await store.withTenant(tenant) { session in
            let team = try await session.team(slug: "bench")
            let boss = try await session.person(email: manager)
            let id = UUID.v7()
            try await session.connection.query(
                """
                INSERT INTO conversations (tenant_id, id, team_id, kind, name, created_by)
                VALUES (\(tenant.id), \(id), \(team.id), 'group', 'Everyone', \(boss.id))
                """)
            try await session.connection.query(
                """
                INSERT INTO conversation_participants (tenant_id, conversation_id, person_id)
                SELECT \(tenant.id), \(id), person_id FROM team_members WHERE tenant_id = \(tenant.id) AND team_id = \(team.id)
                """)
            return id
        }
        try await store.pool.query("ANALYZE conversation_participants")
        return conversation
    }

    /// Sends one message to the group; returns when it committed.
    func sendGroupMessage(_ tenant: Tenant, conversation: UUID) async throws -> Date {
        _ = try await store.withTenant(tenant) {
            try await $0.sendMessage(actor: manager, conversation: conversation.uuidString, text: "All hands at noon", clientID: nil, sentAt: nil)
        }
        return Date()
    }

    /// Commits one assignment every 1/`rate` seconds for `seconds`, each on its own task so a
    /// slow commit does not delay the next; returns each first device's token and commit time.
    func commitAtRate(_ tenant: Tenant, members: [String], rate: Int, seconds: Int) async throws -> [String: Date] {
        let count = min(members.count, rate * seconds)
        let start = ContinuousClock.now
        return try await withThrowingTaskGroup(of: (String, Date).self) { group in
            for index in 0..<count {
                let due = start + .nanoseconds(Int64(index) * 1_000_000_000 / Int64(rate))
                try await Task.sleep(until: due, clock: .continuous)
                group.addTask {
                    _ = try await self.assign(tenant, to: members[index])
                    return (self.token(tenant: 0, member: index), Date())
                }
            }
            var committed: [String: Date] = [:]
            for try await (token, at) in group { committed[token] = at }
            return committed
        }
    }

    // MARK: Running

    func dispatcherConfiguration(_ index: Int) -> Dispatcher.Configuration {
        Dispatcher.Configuration(
            worker: "bench-\(run)-\(index)", concurrency: common.concurrency, claimBatch: common.batch, eventBatch: 500,
            tenants: created.withLock { $0.map(\.id) })
    }

    /// `common.workers` dispatchers, each with its own pool, for the length of `body`.
    func withDispatchers<Result>(_ body: ([Dispatcher]) async throws -> Result) async throws -> Result {
        func adding(_ dispatchers: [Dispatcher]) async throws -> Result {
            guard dispatchers.count < common.workers else { return try await body(dispatchers) }
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
        // A queue that has been running has statistics; one bulk-loaded a moment ago has
        // none until autovacuum comes by, and its plans are a lottery until then.
        try await store.pool.query("ANALYZE outbox, notifications, deliveries, delivery_attempts")
    }

    /// A tenant whose `deliveries` deliveries were fanned out and each attempted once, as after
    /// a burn-down, with the queue's statistics taken before its attempts existed (as the
    /// burn-down leaves them).
    func makeDeliveredTenant(index: Int, deliveries: Int) async throws -> Tenant {
        let devices = 100
        let people = max(1, deliveries / devices)
        let tenant = try await makeTenant(index: index, members: people, devicesPerMember: devices)
        try await assignToEveryMember(tenant, count: people)
        try await fanOutEverything()
        try await store.withTenant(tenant) { session in
            try await session.connection.query(
                """
                INSERT INTO delivery_attempts (tenant_id, id, delivery_id, attempt, worker, started_at, finished_at, outcome, http_status, counted)
                SELECT tenant_id, gen_random_uuid(), id, 1, 'bench', now(), now(), 'delivered', 200, true FROM deliveries
                """)
            try await session.connection.query("UPDATE deliveries SET status = 'sent', attempts = 1, sent_at = now(), lease_owner = NULL, lease_expires_at = NULL")
        }
        return tenant
    }

    /// A tenant the scenario deleted itself.
    func forget(_ tenant: Tenant) {
        created.withLock { $0.removeAll { $0.id == tenant.id } }
    }

    /// Every worker drains; the counters add up.
    func drain() async throws -> Dispatcher.Counters {
        try await withDispatchers { dispatchers in
            try await withThrowingTaskGroup(of: Dispatcher.Counters.self) { group in
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
                    total.failed += counters.failed + counters.expired + counters.deadTokens
                }
                return total
            }
        }
    }

    /// Runs the workers (listening, as in production) around `body`, until `until` holds
    /// (or two minutes pass), then shuts them down.
    func withWorkers<Result: Sendable>(_ body: @Sendable () async throws -> Result, until: @Sendable () async -> Bool) async throws -> Result {
        try await withDispatchers { dispatchers in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for dispatcher in dispatchers { group.addTask { try await dispatcher.run(.forever) } }
                let result = try await body()
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
        return try await store.pool.withTransaction(setup: DatabaseRole.dispatcher.forTransaction) { connection in
            try await connection.query(
                "SELECT count(*) FROM deliveries WHERE tenant_id = ANY(\(ids)) AND status NOT IN ('queued', 'sending')"
            ).single().decode(Int.self, at: 0)
        }
    }

    // MARK: Reporting

    struct Report: Encodable {
        let scenario: String
        let build: String
        let cores: Int
        let workers: Int
        let concurrency: Int
        let batch: Int
        let parameters: [String: Int]
        let counts: [String: Int]
        let rates: [String: Double]
        let durationsSeconds: [String: Double]
        let latencyMilliseconds: [String: Double]?
        /// Of this process: the dispatchers (and the emulator, when it runs in-process).
        let peakRSSMegabytes: Double
    }

    func report(
        scenario: String, parameters: [String: Int], counts: [String: Int], rates: [String: Double], durations: [String: Double],
        latency: [String: Double]?
    ) throws {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        let report = Report(
            scenario: scenario, build: build, cores: ProcessInfo.processInfo.activeProcessorCount, workers: common.workers,
            concurrency: common.concurrency, batch: common.batch, parameters: parameters, counts: counts, rates: rates,
            durationsSeconds: durations, latencyMilliseconds: latency, peakRSSMegabytes: Double(usage.ru_maxrss) / 1024)
        if common.options.json { return try printJSON(report) }
        var fields: [(String, String)] = [
            ("scenario", scenario), ("build", build), ("cores", "\(report.cores)"),
            ("workers", "\(common.workers) × \(common.concurrency) in flight, batches of \(common.batch)"),
        ]
        fields += parameters.sorted { $0.key < $1.key }.map { ($0.key, "\($0.value)") }
        fields += counts.sorted { $0.key < $1.key }.map { ($0.key, "\($0.value)") }
        fields += rates.sorted { $0.key < $1.key }.map { ($0.key, String(format: "%.0f", $0.value)) }
        fields += durations.sorted { $0.key < $1.key }.map { ($0.key + " (s)", String(format: "%.3f", $0.value)) }
        if let latency {
            fields += ["p50", "p95", "p99", "max"].compactMap { key in latency[key].map { ("latency \(key) (ms)", String(format: "%.2f", $0)) } }
        }
        fields.append((emulator.isInProcess ? "peak RSS (MB, dispatchers + emulator)" : "peak RSS (MB)", String(format: "%.1f", report.peakRSSMegabytes)))
        printFields(fields)
    }

    static func percentiles(_ values: [Double]) -> [String: Double] {
        guard !values.isEmpty else { return [:] }
        let sorted = values.sorted()
        func at(_ fraction: Double) -> Double { sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))] }
        return ["p50": at(0.5), "p95": at(0.95), "p99": at(0.99), "max": sorted[sorted.count - 1]]
    }
}

/// The emulator a bench talks to: its own, in this process, or one already running.
enum BenchEmulator: Sendable {
    case inProcess(Emulator)
    case remote(base: String, http: HTTPClient)

    var isInProcess: Bool {
        if case .inProcess = self { true } else { false }
    }

    func acceptedCount() async -> Int {
        switch self {
        case .inProcess(let emulator): return await emulator.acceptedCount()
        case .remote(let base, let http):
            guard let response = try? await http.send(HTTPRequest(url: base + "/emulator/stats", timeout: .seconds(10))),
                let stats = try? JSONDecoder().decode([String: Int].self, from: Data(response.body))
            else { return 0 }
            return stats["accepted"] ?? 0
        }
    }

    func arrivals() async throws -> [String: Date] {
        let messages: [RecordedMessage]
        switch self {
        case .inProcess(let emulator): messages = await emulator.messages()
        case .remote(let base, let http):
            let response = try await http.send(HTTPRequest(url: base + "/emulator/messages", timeout: .seconds(60)))
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            messages = try decoder.decode([RecordedMessage].self, from: Data(response.body))
        }
        return Dictionary(messages.map { ($0.token, $0.receivedAt) }, uniquingKeysWith: { first, _ in first })
    }
}
