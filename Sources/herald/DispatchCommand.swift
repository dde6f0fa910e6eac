import ArgumentParser
import Foundation
import HeraldCore
import HeraldDispatch
import HeraldMetrics
import HeraldRuntime
import HeraldStore
import HeraldTemplates
import Logging
import ServiceLifecycle

/// Options `herald worker` and `herald dispatch` share.
struct DispatcherOptions: ParsableArguments {
    @Option(help: "Sends in flight at once.") var concurrency = 256
    @Option(help: "How long a claim holds without renewal (e.g. 10s); a dead worker's work returns to the queue after it.")
    var lease = "10s"
    @Option(help: "How long a delivery may keep being retried before it expires (e.g. 24h).") var deadline = "24h"
    @Option(name: .customLong("pause"), help: "How long to leave a provider alone after a configuration error (e.g. 30s).")
    var pause = "30s"
    @Option(name: .customLong("only-tenant"), help: ArgumentHelp("Work only for this tenant (repeatable; default: all).", valueName: "slug"))
    var onlyTenants: [String] = []

    func validate() throws {
        guard (1...10_000).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 10000") }
    }

    /// Opens everything a dispatcher needs, runs `body`, and closes it all.
    /// - Parameter storePoolSize: connections of the store `body` gets (the dispatcher has its own).
    /// A worker: the dispatcher, and the webhooks' sender beside it.
    func withWorker<Result>(storePoolSize: Int = 2, _ body: (WorkerService) async throws -> Result) async throws -> Result {
        let environment = heraldEnvironment()
        return try await withDispatcher(listen: true, storePoolSize: storePoolSize) { dispatcher, store in
            try await environment.withWebhookSender(
                store: store, worker: dispatcher.configuration.worker, retention: (dispatcher.configuration.historyRetention ?? .default).duration
            ) { webhooks in
                try await body(WorkerService(dispatcher: dispatcher, webhooks: webhooks, store: store))
            }
        }
    }

    func withDispatcher<Result>(
        listen: Bool, storePoolSize: Int = 2, _ body: (Dispatcher, Store) async throws -> Result
    ) async throws -> Result {
        let lease = try Input.duration(lease, field: "lease")
        let deadline = try Input.duration(deadline, field: "deadline")
        let pause = try Input.duration(pause, field: "pause")
        guard lease >= .seconds(1) else { throw InputError("the lease must be at least 1s") }
        let environment = heraldEnvironment()
        let retention = try HistoryRetention.from(environment: environment.variables, deliveryDeadline: deadline)
        return try await environment.withStore(poolSize: storePoolSize) { store in
            let tenants = try await onlyTenants.asyncMap { try await store.tenant(slug: $0).id }
            let configuration = Dispatcher.Configuration(
                concurrency: concurrency, claimBatch: min(concurrency, 500), lease: lease,
                retry: RetryPolicy(deadline: deadline), pauseOnConfigurationError: pause, tenants: tenants,
                historyRetention: retention)
            return try await environment.withDispatcher(store: store, configuration: configuration, listen: listen) {
                try await body($0, store)
            }
        }
    }
}

extension Array {
    func asyncMap<Mapped>(_ transform: (Element) async throws -> Mapped) async rethrows -> [Mapped] {
        var result: [Mapped] = []
        result.reserveCapacity(count)
        for element in self { result.append(try await transform(element)) }
        return result
    }
}

struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Deliver notifications until SIGTERM or SIGINT.",
        discussion: """
            Claims events and deliveries from the database under leases, so any number of workers on any number of \
            machines may share one database. Wakes at once on the outbox NOTIFY, polls every second as a backstop. \
            On SIGTERM or SIGINT it stops claiming, lets the sends in flight finish and records them, gives back \
            anything else it holds, and exits 0.
            """)

    @Option(
        help: ArgumentHelp(
            "Serve /metrics (Prometheus text), /healthz and /readyz on this address, e.g. 127.0.0.1:9464 (port 0: any free one; the URL is printed once listening). With HERALD_METRICS_TOKEN set, /metrics wants it as a bearer token.",
            valueName: "host:port"))
    var metrics: String?
    @OptionGroup var dispatcher: DispatcherOptions

    func validate() throws {
        if let metrics, ProbeServer.address(metrics) == nil {
            throw ValidationError("--metrics must be HOST:PORT, such as 127.0.0.1:9464")
        }
    }

    func run() async throws {
        let logger = HeraldLogging.logger
        let probeAddress = metrics.flatMap(ProbeServer.address)
        if probeAddress != nil { _ = MetricsRegistry.shared }
        let token = MetricsEndpoint.token(from: heraldEnvironment().variables)
        try await dispatcher.withWorker { worker in
            var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: worker)]
            if let (host, port) = probeAddress {
                let probes = ProbeServer(host: host, port: port, metrics: MetricsEndpoint(token: token), logger: logger) {
                    await worker.notReadyReason()
                }
                let application = probes.application { port in
                    // Written at once, on standard output: scripts (and port 0) wait for this line.
                    let url = "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
                    FileHandle.standardOutput.write(Data((url + "\n").utf8))
                    logger.info("serving /metrics, /healthz and /readyz", metadata: ["url": "\(url)"])
                }
                services.append(.init(service: application))
            }
            let group = ServiceGroup(
                configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await group.run()
        }
    }
}

struct DispatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dispatch",
        abstract: "Deliver what is due, then exit (herald dispatch --drain).",
        discussion: """
            Works until no event waits to be fanned out, nothing is being sent and no delivery is due within --wait \
            (retries due later stay queued for a worker). Shows progress on a terminal; prints what it did.
            """)

    @Flag(help: "Work until nothing is due, then exit (required: herald worker runs continuously).") var drain = false
    @Option(help: "Also wait for retries due within this long (e.g. 10s; 0 for none).") var wait = "10s"
    @OptionGroup var dispatcher: DispatcherOptions
    @OptionGroup var options: GlobalOptions

    struct Output: Encodable {
        let eventsFannedOut: Int
        /// Events passed over (unreadable, or their own fan-out failing too often).
        let eventsPassedOver: Int
        let deliveriesQueued: Int
        let sent: Int
        let retried: Int
        let deadTokens: Int
        let failed: Int
        let expired: Int
        let cancelled: Int
        let pausedForConfiguration: Int
        let heldBack: Int
        /// Of `heldBack`: sent, with no answer in time (each may arrive twice).
        let unanswered: Int
        /// Given back unsent: too little of the lease was left to begin the send.
        let leasesRanShort: Int
        let seconds: Double
    }

    func run() async throws {
        guard drain else { throw ValidationError("say --drain (herald worker is the one that keeps running)") }
        let horizon = try Input.duration(wait, field: "wait")
        let started = ContinuousClock.now
        let counters = try await dispatcher.withDispatcher(listen: false) { dispatcher, _ in
            let progress = isatty(STDERR_FILENO) == 1 && !options.json ? Task { await Self.showProgress(dispatcher) } : nil
            defer { progress?.cancel() }
            try await dispatcher.run(.drain(horizon: horizon))
            progress?.cancel()
            if progress != nil { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
            return dispatcher.counters
        }
        let elapsed = started.duration(to: .now)
        let output = Output(
            eventsFannedOut: counters.eventsFannedOut, eventsPassedOver: counters.eventsPassedOver, deliveriesQueued: counters.deliveriesQueued,
            sent: counters.sent,
            retried: counters.retried, deadTokens: counters.deadTokens, failed: counters.failed, expired: counters.expired,
            cancelled: counters.cancelled, pausedForConfiguration: counters.pausedForConfiguration,
            heldBack: counters.heldBack, unanswered: counters.unanswered, leasesRanShort: counters.leasesRanShort, seconds: elapsed.timeInterval)
        if options.json { return try printJSON(output) }
        printFields([
            ("events fanned out", "\(output.eventsFannedOut)"), ("events passed over", "\(output.eventsPassedOver)"),
            ("deliveries queued", "\(output.deliveriesQueued)"),
            ("sent", "\(output.sent)"), ("retried", "\(output.retried)"), ("dead tokens", "\(output.deadTokens)"),
            ("failed", "\(output.failed)"), ("expired", "\(output.expired)"), ("cancelled", "\(output.cancelled)"),
            ("held back (configuration)", "\(output.pausedForConfiguration)"),
            ("held back (endpoint down)", "\(output.heldBack)"),
            ("  of which sent, no answer", "\(output.unanswered)"),
            ("given back (lease ran short)", "\(output.leasesRanShort)"),
            ("time", String(format: "%.2fs", output.seconds))
        ])
        if counters.pausedForConfiguration > 0 {
            throw UserFacingMessage("some deliveries were held back by a provider configuration error; herald stats says which")
        }
    }

    /// A progress bar on stderr: done over done plus what is still queued.
    static func showProgress(_ dispatcher: Dispatcher) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(250))
            let counters = dispatcher.counters
            let done = counters.sent + counters.deadTokens + counters.failed + counters.expired + counters.cancelled
            let remaining = (try? await dispatcher.remainingDeliveries()) ?? 0
            let total = max(done + remaining, 1)
            let width = 30
            let filled = min(width, width * done / total)
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let line =
                "\r\u{1B}[2K[\(bar)] \(done)/\(total) done · \(counters.sent) sent · \(counters.retried) retried · \(counters.inFlight) in flight"
            FileHandle.standardError.write(Data(line.utf8))
        }
    }
}
