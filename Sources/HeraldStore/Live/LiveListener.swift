import Foundation
import HeraldCore
import HeraldPostgres
import Logging

/// The live channel's wake-ups across servers: the feed's channels, presence and typing, a
/// subscription on the store's one LISTEN connection (`Store.notifier`). Every event is a hint;
/// the tables are the truth (a server that missed some reads the feed from its cursor).
public final class LiveListener: Sendable {
    public enum Event: Sendable, Equatable {
        /// Rows for the sequencer.
        case pending
        /// New positions in the feed.
        case feed
        case presence(LivePresenceChange)
        case typing(LiveTyping)
        /// Someone left a team or a conversation of this tenant: what presence subscriptions
        /// follow is to be checked again now, not at the next minute's check.
        case membership(tenant: UUID)
        /// Listening; after a lost connection came back, hints may have been missed.
        case connected(reconnected: Bool)
        case disconnected(reason: String)
    }

    /// Where a departure from a team or a conversation is told, by the trigger that numbers it
    /// (sql/0047), with the tenant's id.
    public static let membershipChannel = "herald_membership"

    public let events: AsyncStream<Event>
    private let listener: PostgresListener

    /// Starts listening at once, on `store`'s database.
    public init(store: Store, logger: Logger) {
        let listener = store.notifier.listen(to: [
            LiveFeed.pendingChannel, LiveFeed.feedChannel, LivePresenceChange.channel, LiveTyping.channel, Self.membershipChannel
        ])
        self.listener = listener
        events = AsyncStream { continuation in
            let task = Task {
                for await event in listener.events {
                    switch event {
                    case .notification(LiveFeed.pendingChannel, _): continuation.yield(.pending)
                    case .notification(LiveFeed.feedChannel, _): continuation.yield(.feed)
                    case .notification(LivePresenceChange.channel, let payload):
                        if let change = try? PostgresJSON<LivePresenceChange>(postgresText: payload, type: .jsonb).value {
                            continuation.yield(.presence(change))
                        }
                    case .notification(LiveTyping.channel, let payload):
                        if let typing = try? PostgresJSON<LiveTyping>(postgresText: payload, type: .jsonb).value {
                            continuation.yield(.typing(typing))
                        }
                    case .notification(Self.membershipChannel, let payload):
                        if let tenant = UUID(uuidString: payload) { continuation.yield(.membership(tenant: tenant)) }
                    case .notification: break
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
