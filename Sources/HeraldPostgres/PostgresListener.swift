import Foundation
import Logging

/// A subscription to some of PostgreSQL's notification channels, on a process's one LISTEN
/// connection (`PostgresNotifier`).
///
/// Events arrive on `events`: `.connected(reconnected: false)` once the channels are listened
/// to, every notification on them, `.disconnected` once when the connection is lost or cannot
/// be made, and `.connected(reconnected: true)` when it is back: notifications sent while it was
/// away are lost, so the user should look for missed work. `stop()`, or nobody reading
/// `events` any more, ends the subscription.
public final class PostgresListener: Sendable {
    public enum Event: Sendable, Equatable {
        /// Listening; `reconnected` is true after a lost connection came back.
        case connected(reconnected: Bool)
        /// The connection was lost; the notifier is trying again.
        case disconnected(reason: String)
        case notification(channel: String, payload: String)
    }

    public let events: AsyncStream<Event>
    private let notifier: PostgresNotifier
    private let id: Int

    /// Subscribes to `channels` on `notifier`'s connection.
    init(notifier: PostgresNotifier, channels: [String]) {
        let (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(10_000))
        self.events = events
        self.notifier = notifier
        let id = notifier.subscribe(Set(channels), continuation)
        self.id = id
        continuation.onTermination = { [notifier] _ in notifier.unsubscribe(id) }
    }

    /// A subscription on a connection of its own (a notifier that only it uses).
    public convenience init(configuration: PostgresConfiguration, channels: [String], logger: Logger) {
        self.init(notifier: PostgresNotifier(configuration: configuration, logger: logger), channels: channels)
    }

    /// Failed connection attempts in a row now of the notifier it listens on.
    public var failuresInARow: Int { notifier.failuresInARow }

    /// Stops listening and finishes `events`. Safe to call twice.
    public func stop() {
        notifier.unsubscribe(id)
    }
}
