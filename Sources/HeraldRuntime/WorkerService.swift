import HeraldDispatch
import HeraldStore
import HeraldWebhooks
import ServiceLifecycle

/// A dispatcher, and the webhooks' sender beside it, as a service of a `ServiceGroup`
/// (`herald worker`, `herald serve --worker`): graceful shutdown stops claiming and lets the
/// sends in flight finish and be recorded.
public struct WorkerService: Service {
    public let dispatcher: Dispatcher
    public let webhooks: WebhookSender?
    /// The store whose database readiness asks about.
    public let store: Store

    public init(dispatcher: Dispatcher, webhooks: WebhookSender?, store: Store) {
        self.dispatcher = dispatcher
        self.webhooks = webhooks
        self.store = store
    }

    public func run() async throws {
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                if let webhooks { group.addTask { await webhooks.run() } }
                // However the dispatcher stops (a shutdown, a failure), so do the webhooks.
                defer { webhooks?.shutdown() }
                try await dispatcher.run(.forever)
            }
        } onGracefulShutdown: {
            dispatcher.shutdown()
            webhooks?.shutdown()
        }
    }

    /// Nil when ready: the worker has not begun to stop, and the database answers with the
    /// schema this binary expects. Otherwise why not.
    public func notReadyReason() async -> String? {
        if dispatcher.isStopping { return "stopping" }
        return await store.notReadyReason()
    }
}
