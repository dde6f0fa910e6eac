import HeraldCore
import HeraldLive
import HeraldStore
import HeraldWebhooks
import Hummingbird
import Logging

/// The HTTP API of docs/api.md, as a Hummingbird router: operators' `/healthz` and
/// `/readyz` without credentials, everything under `/v1` behind `AuthenticationMiddleware`,
/// and every error as a problem document. Each request works in one transaction of the
/// caller's tenant.
public struct HeraldAPI: Sendable {
    let store: Store
    let logger: Logger
    let limiter: RateLimiter
    let attempts: FailedAttempts
    /// Routes served beside the API that are not part of its contract (the console).
    let additions: @Sendable (Router<APIContext>) -> Void
    /// Why this server cannot work now (nil: ready), for `/readyz`.
    let notReadyReason: @Sendable () async -> String?
    /// The live channel (`/v1/live`): run it as a service beside the server.
    public let live: LiveHub
    /// Who presented secrets are, for a few seconds: answers only while `credentialService`
    /// runs beside the server.
    public let credentials: CredentialCache
    /// Keeps `credentials` told of revocations (docs/api.md#credentials).
    public var credentialService: CredentialCacheService { CredentialCacheService(cache: credentials) }
    /// Where tenants' webhooks may send (`HERALD_WEBHOOK_ALLOW_HTTP`, `…_ALLOW_PRIVATE`).
    let webhookPolicy: DestinationPolicy
    /// Web Push subscriptions' rules and the server's public key.
    let webPush: WebPushSettings

    /// - Parameters:
    ///   - attempts: where requests without valid credentials are counted (shared with the
    ///     console's sign-in); by default one of `limits`' anonymous rate.
    ///   - notReadyReason: why the server cannot work now (nil: ready); by default, when the
    ///     database does not answer with the schema this binary expects.
    public init(
        store: Store, limits: RateLimits = RateLimits(), attempts: FailedAttempts? = nil, logger: Logger,
        notReadyReason: (@Sendable () async -> String?)? = nil, live: LiveSettings = LiveSettings(),
        webhookPolicy: DestinationPolicy = DestinationPolicy(.webhooks), webPush: WebPushSettings = WebPushSettings(),
        additions: @escaping @Sendable (Router<APIContext>) -> Void = { _ in }
    ) {
        let limiter = RateLimiter(limits)
        self.live = LiveHub(store: store, settings: live, logger: logger) { limiter.admit($0, kind: $1) }
        self.store = store
        self.credentials = CredentialCache(store: store)
        self.logger = logger
        self.limiter = limiter
        self.attempts = attempts ?? FailedAttempts(rate: limits.anonymousRate, burst: limits.anonymousBurst, trustForwardedFor: false)
        self.additions = additions
        self.webhookPolicy = webhookPolicy
        self.webPush = webPush
        self.notReadyReason = notReadyReason ?? { await store.notReadyReason() }
    }

    /// Every route, as `METHOD /path/{parameter}` (the contract test compares them with
    /// openapi/openapi.json).
    public var operations: [String] {
        router(withAdditions: false).routes.map { route in
            let path = "\(route.path)".split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
            return "\(route.method.rawValue) /" + path.joined(separator: "/")
        }
    }

    public func router(withAdditions: Bool = true) -> Router<APIContext> {
        let router = Router(context: APIContext.self)
        // Requests by route, method and status, and their durations (swift-metrics).
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: ProblemMiddleware(logger: logger))
        addHealth(to: router)
        addEmailLinks(to: router)
        let v1 = router.group("v1")
            .add(middleware: AuthenticationMiddleware(store: store, credentials: credentials, attempts: attempts))
            .add(middleware: RateLimitMiddleware(limiter: limiter))
        addMe(to: v1)
        addDevices(to: v1)
        addActivities(to: v1)
        addPeopleTokens(to: v1)
        addHistory(to: v1)
        addDirectory(to: v1)
        addConversations(to: v1)
        addPolicy(to: v1)
        addWebhooks(to: v1)
        addPreferences(to: v1)
        addInbox(to: v1)
        addLive(to: v1)
        if withAdditions { additions(router) }
        return router
    }
}
