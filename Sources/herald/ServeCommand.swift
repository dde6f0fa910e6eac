import ArgumentParser
import Foundation
import HeraldAPI
import HeraldConsole
import HeraldCore
import HeraldLive
import HeraldMetrics
import HeraldPush
import HeraldRuntime
import HeraldStore
import HeraldWebhooks
import ServiceLifecycle

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the HTTP API and the admin console until SIGTERM or SIGINT (docs/api.md lists every endpoint).",
        discussion: """
            Prints the base URL it listens on (on standard output, once listening). The admin console is at /console. Without --tls-cert and --tls-key \
            it speaks HTTP/1.1 in the clear (put it behind a TLS proxy); with them, HTTP/2 and HTTP/1.1 over TLS. \
            --worker also runs a dispatcher in this process (the one-box setup). With HERALD_METRICS_TOKEN set, \
            GET /metrics answers Prometheus text to that bearer token. On SIGTERM it stops accepting, \
            finishes the requests in flight (and the worker its sends), and exits 0.
            """)

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port (0: any free one).") var port = 8080
    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("PEM certificate chain, for TLS.", valueName: "file")) var tlsCert: String?
    @Option(name: .customLong("tls-key"), help: ArgumentHelp("PEM private key, for TLS.", valueName: "file")) var tlsKey: String?
    @Flag(help: "Also deliver notifications in this process, as herald worker does.") var worker = false
    @Flag(
        name: .customLong("behind-tls"),
        help:
            "Clients reach this server over TLS through a proxy: the console's cookies are Secure, and the client's address is the last of X-Forwarded-For."
    )
    var behindTLS = false
    @Option(name: .customLong("person-rate"), help: "Requests a second a person token may make, sustained.") var personRate = 20.0
    @Option(name: .customLong("person-burst"), help: "Requests a person token may make at once.") var personBurst = 100.0
    @Option(name: .customLong("key-rate"), help: "Requests a second a tenant key may make, sustained.") var keyRate = 500.0
    @Option(name: .customLong("key-burst"), help: "Requests a tenant key may make at once.") var keyBurst = 2_000.0
    @Option(name: .customLong("anonymous-rate"), help: "Requests without valid credentials one client address may make a second, sustained.")
    var anonymousRate = 10.0
    @Option(name: .customLong("anonymous-burst"), help: "Requests without valid credentials one client address may make at once.")
    var anonymousBurst = 100.0
    @Option(
        name: .customLong("idle-timeout"), help: "Close a connection with no request in progress (or a request head not yet whole) after this long.")
    var idleTimeout = "30s"
    @Option(name: .customLong("request-timeout"), help: "Close a connection whose request (head to end of body) takes longer to arrive.")
    var requestTimeout = "30s"
    @Option(name: .customLong("handshake-timeout"), help: "Close a TLS connection whose handshake takes longer.") var handshakeTimeout = "10s"
    @Option(name: .customLong("max-connections-per-address"), help: "Connections one client address may hold open at once.")
    var maxConnectionsPerAddress = 256
    @Option(name: .customLong("live-sockets"), help: "Live channel sockets (GET /v1/live) this server holds at most.") var liveSockets = 10_000
    @Option(name: .customLong("live-sockets-per-person"), help: "Live channel sockets one person may hold at once.") var liveSocketsPerPerson = 20
    @Option(name: .customLong("live-heartbeat"), help: "Seconds between the live channel's heartbeats (WebSocket pings).") var liveHeartbeat = 15
    @OptionGroup var dispatcher: DispatcherOptions

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        for (name, value) in [
            ("person-rate", personRate), ("person-burst", personBurst), ("key-rate", keyRate), ("key-burst", keyBurst),
            ("anonymous-rate", anonymousRate), ("anonymous-burst", anonymousBurst)
        ]
        where !(value >= 0.001 && value <= 1_000_000) {
            throw ValidationError("--\(name) must be between 0.001 and 1000000")
        }
        _ = try connectionLimits()
        guard (1...1_000_000).contains(liveSockets) else { throw ValidationError("--live-sockets must be between 1 and 1000000") }
        guard (1...1_000).contains(liveSocketsPerPerson) else { throw ValidationError("--live-sockets-per-person must be between 1 and 1000") }
        guard (5...300).contains(liveHeartbeat) else { throw ValidationError("--live-heartbeat must be between 5 and 300 (seconds)") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        for file in [tlsCert, tlsKey].compactMap({ $0 }) where !FileManager.default.isReadableFile(atPath: file) {
            throw ValidationError("cannot read \(file)")
        }
    }

    /// The connection options, each from 1 s (a count: 1) to a day.
    func connectionLimits() throws -> ConnectionLimits {
        func timeout(_ name: String, _ value: String) throws -> Duration {
            let duration: Duration
            do { duration = try Input.duration(value, field: "--\(name)") } catch { throw ValidationError("\(error)") }
            guard duration >= .seconds(1), duration <= .seconds(86_400) else { throw ValidationError("--\(name) must be between 1s and 24h") }
            return duration
        }
        guard (1...1_000_000).contains(maxConnectionsPerAddress) else {
            throw ValidationError("--max-connections-per-address must be between 1 and 1000000")
        }
        return ConnectionLimits(
            idleTimeout: try timeout("idle-timeout", idleTimeout), requestTimeout: try timeout("request-timeout", requestTimeout),
            handshakeTimeout: try timeout("handshake-timeout", handshakeTimeout), perAddress: maxConnectionsPerAddress)
    }

    func run() async throws {
        let logger = HeraldLogging.logger
        let files = APIServer.raiseFileLimit()
        logger.debug("open files allowed", metadata: ["limit": "\(files)"])
        let connections = try connectionLimits()
        // Before anything that records is made.
        _ = MetricsRegistry.shared
        let metricsToken = MetricsEndpoint.token(from: heraldEnvironment().variables)
        let tls = tlsCert.flatMap { cert in tlsKey.map { APIServer.TLSFiles(certificateChain: cert, privateKey: $0) } }
        @Sendable func serve(_ store: Store, _ worker: WorkerService?) async throws {
            let limits = RateLimits(
                personRate: personRate, personBurst: personBurst, keyRate: keyRate, keyBurst: keyBurst, anonymousRate: anonymousRate,
                anonymousBurst: anonymousBurst)
            let attempts = FailedAttempts(rate: anonymousRate, burst: anonymousBurst, trustForwardedFor: behindTLS)
            let console = try Console(store: store, secureCookies: tls != nil || behindTLS, attempts: attempts, logger: logger)
            // With a worker in the process, ready means the worker can work too.
            let api = HeraldAPI(
                store: store, limits: limits, attempts: attempts, logger: logger,
                notReadyReason: { if let worker { await worker.notReadyReason() } else { await store.notReadyReason() } },
                live: LiveSettings(perPerson: liveSocketsPerPerson, perServer: liveSockets, heartbeat: liveHeartbeat),
                webhookPolicy: try DestinationPolicy(.webhooks, environment: heraldEnvironment().variables),
                webPush: try Self.webPushSettings(heraldEnvironment().variables),
                additions: { router in
                    console.addRoutes(to: router)
                    // Only to a token: this port faces the apps.
                    if let metricsToken { MetricsEndpoint(token: metricsToken).add(to: router) }
                })
            let server = APIServer(api: api, host: host, port: port, tls: tls, connections: connections)
            // Written at once (not through print's buffer): scripts wait for this line.
            let application = try server.application { url in FileHandle.standardOutput.write(Data((url + "\n").utf8)) }
            var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: application)]
            if let worker { services.append(.init(service: worker)) }
            services.append(.init(service: api.credentialService))
            // Last: shut down first, so sockets close with 1001 while requests still finish.
            services.append(.init(service: api.live))
            let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            do {
                try await group.run()
            } catch {
                // One line, not the socket call's own words; every other service has ended.
                if let failure = server.listenFailure(error) { throw UserFacingMessage(failure) }
                throw error
            }
        }
        if worker {
            try await dispatcher.withWorker(storePoolSize: 8) { worker in try await serve(worker.store, worker) }
        } else {
            try await heraldEnvironment().withStore(poolSize: 8) { try await serve($0, nil) }
        }
    }

    /// Web Push's rules and key for the API (`GET /v1/webpush/key`, `POST /v1/devices`).
    /// - Throws: `InputError` for a `HERALD_WEBPUSH_ALLOW_*` value other than 1 or 0.
    static func webPushSettings(_ variables: [String: String]) throws -> WebPushSettings {
        let policy = try DestinationPolicy(.webPush, environment: variables)
        switch WebPushProvider.setup(variables) {
        case .success(let setup): return WebPushSettings(policy: policy, publicKey: setup.credentials.publicKey)
        case .failure(let problem): return WebPushSettings(policy: policy, problem: problem.description)
        }
    }
}
