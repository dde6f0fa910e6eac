import HeraldDispatch
import HeraldStore
import ServiceLifecycle

/// A dispatcher as a service of a `ServiceGroup` (`herald worker`, `herald serve --worker`):
/// graceful shutdown stops claiming and lets the sends in flight finish and be recorded.
public struct WorkerService: Service {
    public let dispatcher: Dispatcher
    /// The store whose database readiness asks about.
    let store: Store

    public init(dispatcher: Dispatcher, store: Store) {
        self.dispatcher = dispatcher
        self.store = store
    }

    public func run() async throws {
        try await withGracefulShutdownHandler {
            try await dispatcher.run(.forever)
        } onGracefulShutdown: {
            dispatcher.shutdown()
        }
    }

    /// Nil when ready: the worker has not begun to stop, and the database answers with the
    /// schema this binary expects. Otherwise why not.
    public func notReadyReason() async -> String? {
        if dispatcher.isStopping { return "stopping" }
        return await store.notReadyReason()
    }
}
