import Foundation
import HeraldCore
import HeraldHTTP
import HeraldStore
import Logging
import Synchronization

/// `herald bench live` (BENCHMARKS.md): a crowd of sockets against a `herald serve` running as
/// a process of its own, from this process, and what each phase cost both of them.
public final class LiveBench: Sendable {
    public struct Settings: Sendable {
        public var sockets = 10_000
        public var group = 1_000
        /// Group messages a second, for `seconds`.
        public var rate = 10
        public var seconds = 10
        /// One-to-one messages a second, for `seconds`.
        public var directRate = 200
        public var team = 100
        /// People each socket subscribes to (its teammates after it), for the presence storm.
        public var followers = 0
        /// Small conversations each person is in, of `conversationSize` people.
        public var conversations = 0
        public var conversationSize = 6
        public var phases: Set<Phase> = [.group, .direct, .storm, .presence]
        /// The group (and its team) start with this many people and grow to `group` while
        /// the server runs, before the group phase: its connections' plans were made when the
        /// team was small, as a team that grows over months (nil: built whole beforehand).
        public var grownFrom: Int?
        /// Print each line as it is measured (else only return them).
        public var printing = true

        public init() {}
    }

    public enum Phase: String, CaseIterable, Sendable {
        case group, direct, storm, presence
        /// A minute idle after `presence`, every subscription held: what the servers' check of
        /// subscriptions (once a minute) costs. Asked for by name only.
        case rechecks
    }

    /// The server under test: its base URL, a tenant key, its process.
    public struct Server: Sendable {
        public let host: String
        public let port: Int
        public let key: String
        public let pid: Int32

        public init(host: String, port: Int, key: String, pid: Int32) {
            self.host = host
            self.port = port
            self.key = key
            self.pid = pid
        }

        var base: String { "http://\(host):\(port)" }
    }

    let server: Server
    let crowd: LiveCrowd
    let settings: Settings
    let tenant: Tenant
    let store: Store
    let http: HTTPClient
    let ledger: LiveBenchLedger
    let sockets: Mutex<[LiveLoadSocket?]>
    let lines = Mutex<[String]>([])
    let next = Mutex(0)
    /// PostgreSQL's CPU, when it runs on this machine.
    let postgres = Mutex<CPUMeter?>(nil)

    public init(server: Server, crowd: LiveCrowd, tenant: Tenant, store: Store, settings: Settings, logger: Logger) throws {
        self.server = server
        self.crowd = crowd
        self.settings = settings
        self.tenant = tenant
        self.store = store
        self.http = try HTTPClient(configuration: .init(maxInFlight: 256), logger: logger)
        self.ledger = LiveBenchLedger(sockets: crowd.emails.count)
        self.sockets = Mutex(Array(repeating: nil, count: crowd.emails.count))
    }

    /// Every phase asked for, in order; returns the report's lines.
    public func run() async throws -> [String] {
        defer { http.shutdown() }
        let backend = try? await store.backendProcessID()
        postgres.withLock { $0 = CPUMeter(backend: backend.map(Int32.init)) }
        let rssBefore = ProcessMeter.rssKiB(of: server.pid)
        let (opening, _) = try await measure { try await self.openAll(resume: false, batch: 200) }
        let opened = opening.seconds
        // Settled: the server hands back what the ramp freed within seconds.
        try await Task.sleep(for: .seconds(6))
        let rssOpen = ProcessMeter.rssKiB(of: server.pid)
        say(
            "\(crowd.emails.count) sockets (teams of \(settings.team)) opened in \(format(opened)) s; herald RSS \(rssBefore / 1024) → \(rssOpen / 1024) MiB: "
                + "\(format(Double(rssOpen - rssBefore) / Double(max(1, crowd.emails.count)))) KiB a socket")
        let (idle, _) = try await measure { try await Task.sleep(for: .seconds(10)) }
        say(
            "idle with every socket open: herald \(format(idle.server / idle.seconds * 100)) % of a core, PostgreSQL \(format((idle.postgres ?? .nan) / idle.seconds * 100)) %, this client \(format(idle.client / idle.seconds * 100)) %"
        )
        say(opening.perItem(crowd.emails.count, "socket opened"))
        if settings.phases.contains(.group) { try await groupPhase() }
        if settings.phases.contains(.direct) { try await directPhase() }
        if settings.phases.contains(.storm) { try await stormPhase() }
        if settings.phases.contains(.presence) { try await presencePhase() }
        if settings.phases.contains(.rechecks) { try await rechecksPhase() }
        for socket in sockets.withLock({ $0 }) { socket?.drop() }
        return lines.withLock { $0 }
    }

    // MARK: Phases

    private func groupPhase() async throws {
        let group = settings.group
        if let small = settings.grownFrom {
            // Messages to the small group first (the server's plans are made now), then it grows.
            let warm = try await post(to: crowd.group, as: crowd.emails[0], count: 10)
            try await until(seconds: 30, "the small group's frames") {
                self.ledger.state.withLock { $0.groupLatency.count } >= warm.count * small
            }
            try await store.withTenant(tenant) { try await $0.growLiveGroup(crowd.group, to: group) }
            say("the group grew from \(small) to \(group) people while the server ran")
        }
        let before = ledger.state.withLock { $0.groupLatency.count }
        let (cost, posted) = try await measure {
            try await self.post(to: self.crowd.group, as: self.crowd.emails[0], rate: self.settings.rate, group: true)
        }
        let expected = posted.count * group
        let progress = {
            self.ledger.state.withLock { state in
                let short = (0..<group).filter { state.sockets[$0].group.count < posted.count }
                return "\(state.groupLatency.count - before) of \(expected) frames; \(short.count) sockets short, e.g. "
                    + short.prefix(5).map { "\($0) (\(state.sockets[$0].group.count) of \(posted.count))" }.joined(separator: ", ")
            }
        }
        try await until(seconds: 30, "the group's frames", progress: progress) {
            self.ledger.state.withLock { $0.groupLatency.count - before } >= expected
        }
        let (latency, afterAnswer, answers) = ledger.state.withLock { state in
            (
                Array(state.groupLatency.dropFirst(before)), state.groupAfterAnswer,
                posted.compactMap { n in state.answered[n].flatMap { a in state.sent[n].map { (a - $0).inMilliseconds } } }
            )
        }
        say(
            "group of \(group): \(posted.count) messages at \(settings.rate)/s, \(latency.count) of \(expected) frames; the POST's answer p50 \(format(percentile(answers, 50))) / p99 \(format(percentile(answers, 99))) ms; "
                + "POST → socket p50 \(format(percentile(latency, 50))) / p99 \(format(percentile(latency, 99))) / max \(format(latency.max() ?? .nan)) ms; "
                + "answer → socket p99 \(format(percentile(afterAnswer, 99))) ms; \(slowCloses()) slow-reader closes (1013) so far, each resumed")
        say(cost.perItem(posted.count, "message"))
    }

    private func directPhase() async throws {
        let before = ledger.state.withLock { $0.directLatency.count }
        let (cost, posted) = try await measure {
            try await self.post(to: self.crowd.direct, as: self.crowd.pair.0, rate: self.settings.directRate, group: false)
        }
        try await until(seconds: 30) { self.ledger.state.withLock { $0.directLatency.count - before } >= posted.count * 2 }
        let latency = ledger.state.withLock { Array($0.directLatency.dropFirst(before)) }
        say(
            "one-to-one: \(posted.count) messages at \(settings.directRate)/s, \(latency.count) of \(posted.count * 2) frames (both phones); "
                + "POST → socket p50 \(format(percentile(latency, 50))) / p99 \(format(percentile(latency, 99))) / max \(format(latency.max() ?? .nan)) ms; "
                + "\(slowCloses()) slow-reader closes (1013) so far"
        )
        say(cost.perItem(posted.count, "message"))
    }

    /// Every socket drops at once, the group is sent 5 messages, and every socket reconnects
    /// at once with its cursor: each of the group's must get exactly those, in order.
    private func stormPhase() async throws {
        try await dropAll()
        ledger.state.withLock { state in
            for index in 0..<settings.group { state.sockets[index].group = [] }
        }
        let missed = try await post(to: crowd.group, as: crowd.emails[0], count: 5)
        let started = ContinuousClock.now
        let (cost, _) = try await measure { try await self.openAll(resume: true, batch: self.crowd.emails.count) }
        let hellos = (ContinuousClock.now - started).inMilliseconds / 1_000
        let short = {
            self.ledger.state.withLock { state in
                let short = (0..<self.settings.group).filter { state.sockets[$0].group.count < missed.count }
                return "\(short.count) of the group's sockets short, e.g. "
                    + short.prefix(5).map { "\($0) (\(state.sockets[$0].group.count))" }.joined(separator: ", ")
            }
        }
        try await until(seconds: 60, "the storm's resume", progress: short) {
            self.ledger.state.withLock { state in (0..<self.settings.group).allSatisfy { state.sockets[$0].group.count >= missed.count } }
        }
        let resumed = (ContinuousClock.now - started).inMilliseconds / 1_000
        let wrong = ledger.state.withLock { state in (0..<settings.group).filter { state.sockets[$0].group != missed }.count }
        say(
            "reconnect storm: \(crowd.emails.count) sockets back with their cursors, every hello in \(format(hellos)) s, the 5 missed messages on all \(settings.group) of the group's sockets in \(format(resumed)) s; "
                + "\(wrong) with a gap, a repeat or the wrong order; \(slowCloses()) slow-reader closes (1013) so far")
        say(cost.perItem(crowd.emails.count, "socket"))
    }

    /// Every socket drops and everyone goes offline; then everyone reconnects at once and
    /// subscribes to their followers: done when every socket has seen all of them online.
    private func presencePhase() async throws {
        try await dropAll()
        try await until(seconds: 120) { try await self.store.withTenant(self.tenant) { try await $0.onlineCount() } == 0 }
        let wanted = crowd.emails.indices.map { followed(by: $0) }
        ledger.state.withLock { state in
            for index in state.sockets.indices {
                state.sockets[index].presenceFrames = 0
                state.sockets[index].presenceEntries = 0
                state.follow(wanted[index], on: index)
            }
        }
        let started = ContinuousClock.now
        let (cost, _) = try await measure {
            try await self.openAll(resume: true, batch: self.crowd.emails.count)
            try await self.until(seconds: 120) { self.ledger.state.withLock { $0.satisfied == $0.sockets.count } }
        }
        let seconds = (ContinuousClock.now - started).inMilliseconds / 1_000
        let (frames, entries) = ledger.state.withLock { state in
            (state.sockets.map(\.presenceFrames).reduce(0, +), state.sockets.map(\.presenceEntries).reduce(0, +))
        }
        let arrivals = max(1, crowd.emails.count)
        say(
            "presence storm: \(crowd.emails.count) people (teams of \(settings.team)), each following \(settings.followers) by subscription and in \(settings.conversations) conversations of \(settings.conversationSize), reconnect at once: "
                + "all saw everyone they follow online in \(format(seconds)) s; \(frames) presence frames (\(format(Double(frames) / Double(arrivals))) an arrival), \(entries) entries (\(format(Double(entries) / Double(arrivals))) an arrival)"
        )
        say(cost.perItem(crowd.emails.count, "arrival"))
    }

    /// A minute and a second idle, every socket open and subscribed: the window holds one
    /// check of the subscriptions (`LiveStateMachine.fullCheckEvery`), and the heartbeats.
    private func rechecksPhase() async throws {
        let held = crowd.emails.indices.map { followed(by: $0).count }.reduce(0, +)
        let (idle, _) = try await measure { try await Task.sleep(for: .seconds(61)) }
        say(
            "a minute idle with \(held) presence subscriptions held (one check of them): herald \(format(idle.server)) s of CPU, "
                + "PostgreSQL \(format(idle.postgres ?? .nan)) s, this client \(format(idle.client)) s over \(format(idle.seconds)) s")
    }

    /// The people socket `index` subscribes to: the `followers` teammates after it.
    func followed(by index: Int) -> Set<String> {
        let team = index / settings.team
        let size = min(settings.team, crowd.emails.count - team * settings.team)
        guard size > 1 else { return [] }
        return Set((1...min(settings.followers, size - 1)).map { crowd.emails[team * settings.team + (index - team * settings.team + $0) % size] })
    }

    // MARK: Sockets

    /// Opens every socket, `batch` at a time (a batch's hellos awaited); with `resume`, each
    /// from its cursor, subscribing to its followers on `hello`.
    private func openAll(resume: Bool, batch: Int) async throws {
        let count = crowd.emails.count
        var start = 0
        while start < count {
            let range = start..<min(count, start + batch)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in range { group.addTask { try await self.open(index, resume: resume) } }
                try await group.waitForAll()
            }
            start = range.upperBound
        }
        try await until(seconds: 120) { self.ledger.state.withLock { state in state.sockets.allSatisfy { $0.helloAt != nil } } }
    }

    private func open(_ index: Int, resume: Bool) async throws {
        let cursor = ledger.state.withLock { state -> String? in
            state.sockets[index].helloAt = nil
            return state.sockets[index].cursor
        }
        let query = resume ? cursor.map { "after=\($0)" } ?? "" : ""
        let subscribe = settings.followers > 0 && settings.phases.contains(.presence) ? Array(followed(by: index)).sorted() : []
        let ledger = self.ledger
        for attempt in 1...20 {
            do {
                let socket = try await LiveLoadSocket.open(
                    host: server.host, port: server.port, key: server.key, email: crowd.emails[index], query: query,
                    onText: { text in ledger.received(text, on: index) },
                    onClose: { code in
                        guard code == 1013 else { return ledger.state.withLock { $0.closed += 1 } }
                        // A slow reader, as the server judged: an app reconnects with its cursor.
                        ledger.state.withLock { $0.slowCloses += 1 }
                        Task { try? await self.open(index, resume: true) }
                    })
                if !subscribe.isEmpty {
                    socket.send(#"{"type":"presence.subscribe","people":[\#(subscribe.map { "\"\($0)\"" }.joined(separator: ","))]}"#)
                }
                sockets.withLock { $0[index] = socket }
                return
            } catch {
                // Refused while the server still counts the sockets that just dropped (503).
                if attempt == 20 { throw error }
                try await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    /// Drops every socket and waits until each has closed.
    private func dropAll() async throws {
        let closedBefore = ledger.state.withLock { $0.closed }
        let open = sockets.withLock { sockets in
            defer { sockets = Array(repeating: nil, count: sockets.count) }
            return sockets.compactMap { $0 }
        }
        for socket in open { socket.drop() }
        try await until(seconds: 60) { self.ledger.state.withLock { $0.closed } - closedBefore >= open.count }
    }

    // MARK: Messages

    /// Posts to `conversation` as `sender` at `rate` a second for `settings.seconds`, each POST
    /// on a task of its own; returns the messages' numbers once every answer came.
    private func post(to conversation: UUID, as sender: String, rate: Int, group: Bool) async throws -> [Int] {
        let start = ContinuousClock.now
        let count = rate * settings.seconds
        return try await withThrowingTaskGroup(of: Int.self) { tasks in
            for index in 0..<count {
                try await Task.sleep(until: start + .nanoseconds(Int64(index) * 1_000_000_000 / Int64(rate)), clock: .continuous)
                tasks.addTask { try await self.postOne(to: conversation, as: sender, group: group) }
            }
            var numbers: [Int] = []
            for try await number in tasks { numbers.append(number) }
            return numbers
        }
    }

    /// Posts `count` messages to the group one after another.
    private func post(to conversation: UUID, as sender: String, count: Int) async throws -> [Int] {
        var numbers: [Int] = []
        for _ in 0..<count { numbers.append(try await postOne(to: conversation, as: sender, group: true)) }
        return numbers
    }

    private func postOne(to conversation: UUID, as sender: String, group: Bool) async throws -> Int {
        let number = next.withLock { next in
            defer { next += 1 }
            return next
        }
        ledger.state.withLock { state in
            if group { state.groupMessages.insert(number) }
            state.sent[number] = .now
        }
        let response = try await http.send(
            HTTPRequest(
                method: "POST", url: server.base + "/v1/conversations/\(conversation.lowercasedString)/messages",
                headers: [("Authorization", "Bearer \(server.key)"), ("Herald-On-Behalf-Of", sender), ("Content-Type", "application/json")],
                body: Array(#"{"text":"bench#\#(number)# on its way"}"#.utf8), timeout: .seconds(60)))
        ledger.state.withLock { $0.answered[number] = .now }
        guard response.status == 201 else {
            throw LiveLoadSocket.Refused(description: "POST a message: \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        }
        return number
    }

    // MARK: Measuring

    private func measure<Result>(_ body: () async throws -> Result) async throws -> (Cost, Result) {
        let serverBefore = ProcessMeter.cpuSeconds(of: server.pid)
        let clientBefore = ProcessMeter.ownCPUSeconds()
        let meter = postgres.withLock { $0 }
        let postgresBefore = meter?.sample().server
        let walBefore = try? await store.serverActivity().walBytes
        let started = ContinuousClock.now
        let result = try await body()
        let walAfter = try? await store.serverActivity().walBytes
        let postgresAfter = meter?.sample().server
        let cost = Cost(
            seconds: (ContinuousClock.now - started).inMilliseconds / 1_000, server: ProcessMeter.cpuSeconds(of: server.pid) - serverBefore,
            client: ProcessMeter.ownCPUSeconds() - clientBefore,
            postgres: postgresBefore.flatMap { before in postgresAfter.map { $0 - before } },
            walBytes: walBefore.flatMap { before in walAfter.map { $0 - before } })
        return (cost, result)
    }

    /// Waits for `condition`, checked every 20 ms, at most `seconds`; past that, the error
    /// names `what` and says how far it got (`progress`).
    private func until(
        seconds: Int, _ what: String = "the phase", progress: () -> String = { "" }, _ condition: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while try await !condition() {
            guard ContinuousClock.now < deadline else {
                let got = progress()
                throw LiveLoadSocket.Refused(description: "\(what) not done within \(seconds) s" + (got.isEmpty ? "" : ": \(got)"))
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Sockets the server closed with 1013 since the bench began.
    private func slowCloses() -> Int {
        ledger.state.withLock { $0.slowCloses }
    }

    private func say(_ line: String) {
        if settings.printing {
            print(line)
            fflush(nil)
        }
        lines.withLock { $0.append(line) }
    }
}
