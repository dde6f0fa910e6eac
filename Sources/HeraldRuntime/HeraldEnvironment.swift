import Foundation
import HeraldCore
import HeraldDispatch
import HeraldHTTP
import HeraldPostgres
import HeraldPush
import HeraldStore
import HeraldWebhooks
import Logging

/// Herald put together from the process environment, in one direction: configuration →
/// database pool → store → HTTP client → providers → dispatcher. The CLI, the bench, the
/// demo and the tests assemble Herald here and nowhere else.
///
/// Every `with…` method lends what it opens for the length of its body and closes it
/// afterwards, whether the body returned or threw.
public struct HeraldEnvironment: Sendable {
    /// The variables, as the process received them.
    public let variables: [String: String]
    public let logger: Logger

    public init(_ variables: [String: String] = ProcessInfo.processInfo.environment, logger: Logger) {
        self.variables = variables
        self.logger = logger
    }

    /// A variable's value; nil when it is unset or empty.
    public subscript(name: String) -> String? {
        variables[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `HERALD_CA_FILE`: certificate authorities trusted besides the system's.
    public var extraCAFile: String? { self["HERALD_CA_FILE"] }

    /// `HERALD_HTTP_ENGINE`: what carries HTTP/2 (over TLS, and h2c) to the providers, `nghttp2`
    /// (Herald's own client, the default) or `libcurl`.
    /// - Throws: `PushConfigurationError` for any other value.
    public func httpEngine() throws -> HTTPClient.Configuration.Engine {
        guard let value = self["HERALD_HTTP_ENGINE"] else { return .nghttp2 }
        guard let engine = HTTPClient.Configuration.Engine(rawValue: value.lowercased()) else {
            let names = HTTPClient.Configuration.Engine.allCases.map(\.rawValue).joined(separator: " or ")
            throw PushConfigurationError("HERALD_HTTP_ENGINE must be \(names), not \"\(value)\"")
        }
        return engine
    }

    /// Where the database is: `HERALD_DATABASE_URL`, or the embedded cluster under `HERALD_HOME`.
    public func databaseSource() throws -> DatabaseSource {
        try DatabaseSource.resolve(environment: variables, logger: logger)
    }

    /// The store on the database (the embedded cluster is started and migrated on first use).
    public func withStore<Result>(poolSize: Int = 2, _ body: (Store) async throws -> Result) async throws -> Result {
        let freshness = try DeviceFreshness.from(environment: variables)
        let pool = try await databaseSource().openPool(size: poolSize, logger: logger)
        return try await pool.closing { pool in
            try await explainingConnectionFailures { try await body(Store(pool: pool, logger: logger, deviceFreshness: freshness)) }
        }
    }

    /// An HTTP client trusting `HERALD_CA_FILE` on `HERALD_HTTP_ENGINE`, and the providers
    /// the environment configures on it (`ProviderGateway.fromEnvironment`).
    public func withGateway<Result>(maxInFlight: Int, _ body: (ProviderGateway) async throws -> Result) async throws -> Result {
        let configuration = HTTPClient.Configuration(maxInFlight: maxInFlight, extraCAFile: extraCAFile, engine: try httpEngine())
        let http = try HTTPClient(configuration: configuration, logger: logger)
        defer { http.shutdown() }
        // Web Push's own client: endpoints are chosen by whoever registers a browser, so every
        // connection is checked (libcurl, HTTP/1.1; a connection is never shared with FCM's or APNs's).
        let webPushHTTP = try HTTPClient(
            configuration: .init(
                maxInFlight: maxInFlight, maxConnectionsPerHost: 16, maxCleartextConnectionsPerHost: 16, extraCAFile: extraCAFile,
                http1Only: true, engine: .libcurl),
            logger: logger)
        defer { webPushHTTP.shutdown() }
        return try await body(ProviderGateway.fromEnvironment(variables, http: http, webPushHTTP: webPushHTTP))
    }

    /// A dispatcher on `store`'s database with the environment's providers, sending up to
    /// `configuration.concurrency` at once, with a connection to spare (upkeep: timers,
    /// history partitions) besides the ones `Dispatcher.with` counts.
    public func withDispatcher<Result>(
        store: Store, configuration: Dispatcher.Configuration, listen: Bool, poolSize: Int? = nil,
        _ body: (Dispatcher) async throws -> Result
    ) async throws -> Result {
        try await withGateway(maxInFlight: configuration.concurrency) { gateway in
            logReadiness(of: gateway)
            return try await Dispatcher.with(
                store: store, listen: listen, gateway: gateway, configuration: configuration,
                poolSize: poolSize ?? configuration.fanOutConcurrency + 3, logger: logger, body)
        }
    }

    /// The webhooks' sender on `store` (docs/webhooks.md), on an HTTP client of its own: libcurl,
    /// HTTP/1.1, trusting `HERALD_CA_FILE` besides the system's CAs, every connection's address checked against `HERALD_WEBHOOK_ALLOW_HTTP` and
    /// `HERALD_WEBHOOK_ALLOW_PRIVATE`.
    /// - Throws: `InputError` for a value of those variables other than 1 or 0.
    public func withWebhookSender<Result>(
        store: Store, worker: String, retention: Duration, _ body: (WebhookSender) async throws -> Result
    ) async throws -> Result {
        let policy = try DestinationPolicy(.webhooks, environment: variables)
        // One host may carry many tenants' endpoints: the queue holds each endpoint to its 10 in
        // flight, and the client limits a host no lower than the whole (a per-host limit of 10
        // let one hanging endpoint hold back every other endpoint on its host).
        let configuration = HTTPClient.Configuration(
            maxInFlight: Self.webhookRequests, maxConnectionsPerHost: Self.webhookRequests,
            maxCleartextConnectionsPerHost: Self.webhookRequests, extraCAFile: extraCAFile, http1Only: true, engine: .libcurl)
        let http = try HTTPClient(configuration: configuration, logger: logger)
        defer { http.shutdown() }
        let sender = WebhookSender(
            store: store, client: http,
            configuration: .init(policy: policy, maxInFlight: Self.webhookRequests, retention: retention), worker: worker, logger: logger)
        return try await body(sender)
    }

    /// Webhook requests one worker has in flight.
    static let webhookRequests = 100

    /// Says at start which providers can send: one line at info, or a warning when none can
    /// (the first sign used to be a critical line when the first push arrived).
    private func logReadiness(of gateway: ProviderGateway) {
        let readiness = gateway.readiness
        var metadata: Logger.Metadata = [:]
        for (provider, problem, note) in readiness {
            metadata["provider.\(provider.rawValue)"] = "\(problem ?? note.map { "configured; \($0)" } ?? "configured")"
        }
        let configured = readiness.filter { $0.problem == nil }.map(\.provider.rawValue)
        if configured.isEmpty {
            logger.warning("no push provider is configured: notifications stay queued until one is", metadata: metadata)
        } else {
            logger.info("push providers: \(configured.joined(separator: ", ")) configured", metadata: metadata)
        }
    }
}
