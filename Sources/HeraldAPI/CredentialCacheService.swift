import HeraldStore
import ServiceLifecycle

/// The API's credential cache listening for changes, as a service beside the server (the
/// cache answers only while this runs: docs/api.md#credentials). Ends at a graceful shutdown.
public struct CredentialCacheService: Service {
    let cache: CredentialCache

    public func run() async throws {
        let cache = cache
        await cancelWhenGracefulShutdown { await cache.run() }
    }
}
