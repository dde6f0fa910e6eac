import HeraldCore

/// Web Push as this server sees it (docs/apps.md#web-push-browsers-and-installed-web-apps): where subscriptions' endpoints may
/// lead, and the public key pages subscribe with.
public struct WebPushSettings: Sendable, Equatable {
    /// `HERALD_WEBPUSH_ALLOW_HTTP`, `HERALD_WEBPUSH_ALLOW_PRIVATE`.
    public var policy: DestinationPolicy
    /// The VAPID public key, base64url; nil when Web Push is not configured.
    public var publicKey: String?
    /// Why it is not configured (shown by `GET /v1/webpush/key`).
    public var problem: String?

    public init(policy: DestinationPolicy = DestinationPolicy(.webPush), publicKey: String? = nil, problem: String? = nil) {
        self.policy = policy
        self.publicKey = publicKey
        self.problem = problem
    }
}
