import HeraldCore
import Hummingbird

/// What a request carries from the middleware to its route: who calls, once authenticated.
public struct APIContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by `AuthenticationMiddleware` for every route under `/v1`.
    var caller: Caller?
    /// Set on a WebSocket upgrade request: where a route that accepts it leaves the plan.
    public internal(set) var liveUpgrade: LiveUpgradeSlot?
    /// The address the connection comes from (its IP, without the port).
    public let peerAddress: String

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }

    /// Bodies over 64 KiB are refused with 413.
    public var maxUploadSize: Int { 64 * 1024 }

    /// The caller of a `/v1` route.
    func requireCaller() throws -> Caller {
        guard let caller else { throw Problem.noCredentials("send Authorization: Bearer followed by a person token or a tenant key") }
        return caller
    }
}
