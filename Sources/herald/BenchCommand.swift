import ArgumentParser
import Foundation
import HeraldBench
import HeraldRuntime

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Herald: burn-down, latency, fan-out, transitions, tenant deletion, webhooks (against the emulator), and the live channel.",
        discussion: """
            Starts what it needs: the database (HERALD_DATABASE_URL or the embedded cluster) and an emulator, as a \
            child process (--emulator in-process: in this one), unless GOOGLE_APPLICATION_CREDENTIALS and \
            HERALD_FCM_ENDPOINT point at a running one. Burn-down and fan-out report CPU per delivery: this process's \
            (by thread), the database server's when it runs on this machine, and the emulator's. Each run \
            works in fresh tenants named bench-…, removed afterwards (--keep leaves them). Build with \
            `swift build -c release --traits Server` first: a debug build is several times slower.
            """,
        subcommands: [
            BurnDown.self, Latency.self, FanOut.self, Transitions.self, TenantDelete.self, Webhooks.self, BenchLiveCommand.self, WebPush.self,
            Email.self
        ])

    struct Common: ParsableArguments {
        @Option(help: "Dispatchers (workers) in this process.") var workers = 1
        @Option(help: "Sends in flight per worker.") var concurrency = 512
        @Option(help: "Deliveries claimed per round trip.") var batch = 512
        @Flag(help: "Leave the bench tenants in the database.") var keep = false
        @Option(help: "Where the emulator runs when none is configured: process (a child process) or in-process.")
        var emulator = "process"
        @OptionGroup var options: GlobalOptions

        var settings: BenchSettings { BenchSettings(workers: workers, concurrency: concurrency, batch: batch, keep: keep) }

        /// Runs `scenario` on a rig and prints its report.
        func run(poolSize: Int = 8, _ scenario: @Sendable (BenchRig) async throws -> BenchReport) async throws {
            let logger = DemoCommand.quiet(HeraldLogging.logger, at: .warning)
            var variables = ProcessInfo.processInfo.environment
            var child: EmulatorProcess?
            if emulator == "process", variables["HERALD_FCM_ENDPOINT"] == nil || variables["GOOGLE_APPLICATION_CREDENTIALS"] == nil {
                let started = try EmulatorProcess.start()
                variables.merge(started.variables) { $1 }
                child = started
            }
            defer { child?.stop() }
            let report = try await BenchRig.with(
                HeraldEnvironment(variables, logger: logger), settings: settings, poolSize: poolSize,
                emulatorLogger: DemoCommand.quiet(logger, at: .critical), receiver: child?.http1, scenario)
            if options.json { return try printJSON(report) }
            printFields(report.fields)
        }

        func validate() throws {
            guard (1...16).contains(workers), (1...10_000).contains(concurrency), (1...5_000).contains(batch) else {
                throw ValidationError("--workers 1-16, --concurrency 1-10000, --batch 1-5000")
            }
            guard ["process", "in-process"].contains(emulator) else { throw ValidationError("--emulator process or in-process") }
        }
    }

    struct WebPush: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "webpush",
            abstract: "The CPU a Web Push costs: its body, encryption and VAPID header on one thread, then sent to an in-process emulator.",
            discussion: "Needs no database. The target is 150 µs of CPU a push for encryption and VAPID (BENCHMARKS.md keeps the figures).")
        @Option(help: "Pushes timed on one thread, each phase.") var pushes = 20_000
        @Option(help: "Pushes sent over HTTP to the emulator.") var sends = 10_000
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            guard (1...1_000_000).contains(pushes), (1...1_000_000).contains(sends) else { throw ValidationError("--pushes and --sends 1-1000000") }
            let logger = DemoCommand.quiet(HeraldLogging.logger, at: .critical)
            let report = try await WebPushBench.run(pushes: pushes, sends: sends, logger: logger)
            if options.json { return try printJSON(report) }
            printFields(report.fields)
        }
    }

    struct Email: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "email",
            abstract: "The CPU an email costs (its templates and MIME message on one thread), then emails sent over SMTP to an in-process relay.",
            discussion: "Needs no database. The targets are 500 emails a second and 400 µs of CPU an email (BENCHMARKS.md keeps the figures).")
        @Option(help: "Emails composed on one thread.") var emails = 20_000
        @Option(help: "Emails sent over SMTP to the relay.") var sends = 5_000
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            guard (1...1_000_000).contains(emails), (1...1_000_000).contains(sends) else { throw ValidationError("--emails and --sends 1-1000000") }
            let logger = DemoCommand.quiet(HeraldLogging.logger, at: .critical)
            let report = try await EmailBench.run(emails: emails, sends: sends, logger: logger)
            if options.json { return try printJSON(report) }
            printFields(report.fields)
        }
    }

    struct BurnDown: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "burn-down", abstract: "Queue N deliveries across tenants, then time until every outcome is recorded.")
        @Option(help: "Deliveries.") var deliveries = 200_000
        @Option(help: "Tenants they are spread over.") var tenants = 4
        @Option(name: .customLong("devices-per-person"), help: "Devices per recipient.") var devicesPerPerson = 100
        @OptionGroup var common: Common

        func run() async throws {
            guard deliveries >= tenants * devicesPerPerson, tenants >= 1, devicesPerPerson >= 1 else {
                throw ValidationError("--deliveries must be at least --tenants × --devices-per-person")
            }
            try await common.run { try await $0.burnDown(deliveries: deliveries, tenants: tenants, devicesPerPerson: devicesPerPerson) }
        }
    }

    struct Latency: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Commit events at a steady rate; event commit → request at the emulator, p50/p95/p99/max.")
        @Option(help: "Events per second.") var rate = 200
        @Option(help: "Seconds.") var seconds = 30
        @OptionGroup var common: Common

        func run() async throws {
            guard (1...5_000).contains(rate), (1...600).contains(seconds) else { throw ValidationError("--rate 1-5000, --seconds 1-600") }
            try await common.run { try await $0.latency(rate: rate, seconds: seconds) }
        }
    }

    struct FanOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fan-out", abstract: "One message to a large group: time until every request is sent and every outcome recorded.")
        @Option(help: "People in the group.") var people = 10_000
        @OptionGroup var common: Common

        func run() async throws {
            guard (2...200_000).contains(people) else { throw ValidationError("--people 2-200000") }
            try await common.run { try await $0.fanOut(people: people) }
        }
    }

    struct Transitions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Workflow commands per second through the store (assign, start, complete, approve, each with its event).")
        @Option(help: "Seconds.") var seconds = 10
        @Option(help: "Concurrent clients.") var clients = 8
        @OptionGroup var common: Common

        func run() async throws {
            guard (1...600).contains(seconds), (1...256).contains(clients) else { throw ValidationError("--seconds 1-600, --clients 1-256") }
            try await common.run(poolSize: min(clients, 16)) { try await $0.transitions(seconds: seconds, clients: clients) }
        }
    }

    struct Webhooks: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Webhooks to one keep-alive receiver: N events committed, then one sender timed until each is delivered.",
            discussion: """
                The receiver is the emulator's (POST /webhooks/…, answered 204), in its own process. Reports events a \
                second and the CPU an event cost this process (the sender), PostgreSQL and the receiver.
                """)
        @Option(help: "Events (activity assignments, one message each).") var events = 20_000
        @OptionGroup var common: Common

        func run() async throws {
            guard (1...200_000).contains(events) else { throw ValidationError("--events 1-200000") }
            try await common.run { try await $0.webhooks(events: events) }
        }
    }

    struct TenantDelete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tenant-delete",
            abstract: "Fill a tenant with N deliveries (one attempt each) and delete it; several rounds in one process.")
        @Option(help: "Deliveries (and attempts) per tenant.") var deliveries = 100_000
        @Option(help: "Tenants filled and deleted one after another, in one process.") var rounds = 5
        @OptionGroup var common: Common

        func run() async throws {
            guard (100...1_000_000).contains(deliveries), (1...50).contains(rounds) else {
                throw ValidationError("--deliveries 100-1000000, --rounds 1-50")
            }
            try await common.run { try await $0.tenantDelete(deliveries: deliveries, rounds: rounds) }
        }
    }
}
