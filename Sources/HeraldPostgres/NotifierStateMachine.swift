/// Who listens to what on a process's one LISTEN connection (`PostgresNotifier`), as a value:
/// each `mutating` function takes one event (a subscription, an unsubscription, the
/// connection made or lost) and returns what to do. Pure: the notifier's thread performs the
/// actions, under the lock that holds this.
struct NotifierStateMachine: Sendable {
    struct Subscriber: Sendable {
        let channels: Set<String>
        /// Told `.connected` at least once (the next one says `reconnected: true`).
        var told = false
    }

    /// What a subscription or unsubscription asks of the notifier's thread.
    enum Action: Sendable, Equatable {
        /// No thread runs: start one (it connects and listens to everything wanted).
        case startThread
        /// The thread has changes to make on its connection (`changes()`).
        case wakeThread
        /// The channels are listened to already: tell the subscriber it is listening, now.
        case tellConnected(reconnected: Bool)
        case none
    }

    /// What the thread does on its connection now.
    struct Changes: Sendable, Equatable {
        var listen: Set<String> = []
        var unlisten: Set<String> = []
        /// Subscribers to tell `.connected` once the changes are made.
        var tell: [Int: Bool] = [:]
        /// Nobody listens any more: close the connection and end the thread.
        var stop = false
    }

    private(set) var subscribers: [Int: Subscriber] = [:]
    /// Whether a thread runs (it ends, and says so, when nobody listens).
    private(set) var threadRunning = false
    /// What the current connection LISTENs to; nil while there is none.
    private(set) var listening: Set<String>?
    /// Subscribers waiting for their channels to be listened to.
    private var waiting: Set<Int> = []

    var wanted: Set<String> { subscribers.values.reduce(into: []) { $0.formUnion($1.channels) } }

    mutating func subscribe(_ id: Int, to channels: Set<String>) -> Action {
        subscribers[id] = Subscriber(channels: channels)
        guard threadRunning else {
            threadRunning = true
            waiting.insert(id)
            return .startThread
        }
        guard let listening else {
            // (Told when the connection is made.)
            waiting.insert(id)
            return .none
        }
        if channels.isSubset(of: listening) {
            subscribers[id]?.told = true
            return .tellConnected(reconnected: false)
        }
        waiting.insert(id)
        return .wakeThread
    }

    mutating func unsubscribe(_ id: Int) -> Action {
        guard subscribers.removeValue(forKey: id) != nil else { return .none }
        waiting.remove(id)
        guard threadRunning else { return .none }
        if subscribers.isEmpty { return .wakeThread }
        guard let listening else { return .none }
        return listening.isSubset(of: wanted) ? .none : .wakeThread
    }

    /// The thread connected: what to LISTEN to, and whom to tell (and whether again).
    mutating func connected() -> (listen: Set<String>, tell: [Int: Bool]) {
        let channels = wanted
        listening = channels
        waiting = []
        var tell: [Int: Bool] = [:]
        for (id, subscriber) in subscribers {
            tell[id] = subscriber.told
            subscribers[id]?.told = true
        }
        return (channels, tell)
    }

    /// The connection was lost (or could not be made): whom to tell.
    mutating func disconnected() -> [Int] {
        let wasConnected = listening != nil
        listening = nil
        return wasConnected ? Array(subscribers.keys) : []
    }

    /// On the thread, while connected: the LISTENs and UNLISTENs that make what the connection
    /// listens to what the subscribers want, and whom to tell afterwards; or the end of the
    /// thread when nobody listens (`threadRunning` is false from then on).
    mutating func changes() -> Changes {
        guard !subscribers.isEmpty else {
            threadRunning = false
            listening = nil
            waiting = []
            return Changes(stop: true)
        }
        guard let current = listening else { return Changes() }
        let target = wanted
        var changes = Changes(listen: target.subtracting(current), unlisten: current.subtracting(target))
        listening = target
        for id in waiting {
            changes.tell[id] = subscribers[id]?.told ?? false
            subscribers[id]?.told = true
        }
        waiting = []
        return changes
    }

    /// The thread could not connect and nobody listens any more: it ends.
    mutating func stopIfUnwanted() -> Bool {
        guard subscribers.isEmpty else { return false }
        threadRunning = false
        listening = nil
        return true
    }

    /// Who hears a notification on `channel`.
    func recipients(of channel: String) -> [Int] {
        subscribers.compactMap { $0.value.channels.contains(channel) ? $0.key : nil }
    }
}
