import Foundation
import HeraldPostgres
import Logging

/// The dispatcher's wake-ups: the outbox's and the delivery queue's channels, a subscription
/// on the store's one LISTEN connection (`Store.notifier`), which reconnects by itself.
public final class QueueListener: Sendable {
    public enum Event: Sendable, Equatable {
        /// New events in the outbox.
        case events
        /// Deliveries queued for any worker to share.
        case deliveries
        /// Listening; after a lost connection came back, hints may have been missed.
        case connected(reconnected: Bool)
        case disconnected(reason: String)
    }

    public let events: AsyncStream<Event>
    private let listener: PostgresListener

    /// Starts listening at once, on `store`'s database.
    public init(store: Store, logger: Logger) {
        let listener = store.notifier.listen(to: [Store.outboxChannel, DeliveryQueue.deliveriesChannel])
        self.listener = listener
        events = AsyncStream { continuation in
            let task = Task {
                for await event in listener.events {
                    switch event {
                    case .notification(let channel, _): continuation.yield(channel == DeliveryQueue.deliveriesChannel ? .deliveries : .events)
                    case .connected(let reconnected): continuation.yield(.connected(reconnected: reconnected))
                    case .disconnected(let reason): continuation.yield(.disconnected(reason: reason))
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Stops listening and finishes `events`. Safe to call twice.
    public func stop() {
        listener.stop()
    }
}
