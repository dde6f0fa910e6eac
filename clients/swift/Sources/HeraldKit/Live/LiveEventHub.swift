import Foundation

/// A live session's events to every consumer (README.md, "Events to many screens"): each
/// iteration is a stream of its own, with every event from the moment it starts; one that
/// stops (its task cancelled, its loop left) stops nothing else. Events that come while
/// nobody listens wait for the next stream, as they did for the first.
///
/// A frame's cursor is kept once every stream that got the frame has asked for the event
/// after it: an app that ends while any screen still handles a frame gets it again after its
/// restart. Each stream buffers without limit (a screen that stops reading should end its
/// loop, which ends its stream, or it holds the events and the cursor back).
final class LiveEventHub: Sendable {
    /// What a stream carries: an event, or the mark after a frame's events (acknowledged when
    /// its consumer asks for the next event).
    enum Item: Sendable {
        case event(LiveEvent)
        case handled(mark: Int)
    }

    private struct Subscriber {
        let continuation: AsyncStream<Item>.Continuation
        /// The last mark its consumer went past.
        var acknowledged: Int
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        /// What came while no stream listened.
        var backlog: [Item] = []
        /// The last mark given out, and the cursors not yet kept, by mark.
        var mark = 0
        var cursors: [(mark: Int, cursor: String)] = []
        var finished = false
    }

    private let state = Locked(State())
    private let store: any CursorStore

    init(store: any CursorStore) { self.store = store }

    /// A new stream, with what waited for one; `id` names it to `acknowledge`.
    func subscribe() -> (id: Int, stream: AsyncStream<Item>) {
        let (stream, continuation) = AsyncStream<Item>.makeStream(bufferingPolicy: .unbounded)
        let (id, finished) = state.withLock { state -> (Int, Bool) in
            let id = state.nextID
            state.nextID += 1
            // A mark in the backlog is this stream's to acknowledge; none before it.
            let firstMark = state.backlog.lazy.compactMap { if case .handled(let mark) = $0 { mark } else { nil } }.first
            for item in state.backlog { continuation.yield(item) }
            state.backlog = []
            if !state.finished {
                state.subscribers[id] = Subscriber(continuation: continuation, acknowledged: firstMark.map { $0 - 1 } ?? state.mark)
            }
            return (id, state.finished)
        }
        if finished {
            continuation.finish()
        } else {
            // A consumer that left stops counting; one the session ended still hands over, and
            // acknowledges, what its stream holds.
            continuation.onTermination = { [weak self] termination in
                if case .cancelled = termination { self?.remove(id) }
            }
        }
        return (id, stream)
    }

    /// How many streams listen now.
    var listeners: Int { state.withLock { $0.subscribers.count } }

    /// An event, to every stream listening (or to the next one).
    func yield(_ event: LiveEvent) { send(.event(event)) }

    /// The cursor of the frame whose events were just yielded.
    func handled(cursor: String) {
        let mark = state.withLock { state -> Int in
            state.mark += 1
            state.cursors.append((state.mark, cursor))
            return state.mark
        }
        send(.handled(mark: mark))
    }

    /// The consumer of stream `id` went past `mark`.
    func acknowledge(_ id: Int, mark: Int) {
        state.withLock { state in
            guard var subscriber = state.subscribers[id] else { return }
            subscriber.acknowledged = max(subscriber.acknowledged, mark)
            state.subscribers[id] = subscriber
        }
        keepHandled()
    }

    /// Ends every stream once it has handed over what it holds, and those asked for later once
    /// they have the backlog.
    func finish() {
        let ended = state.withLock { state -> [Subscriber] in
            state.finished = true
            return Array(state.subscribers.values)
        }
        for subscriber in ended { subscriber.continuation.finish() }
    }

    private func send(_ item: Item) {
        state.withLock { state in
            if state.subscribers.isEmpty {
                state.backlog.append(item)
            } else {
                for subscriber in state.subscribers.values { subscriber.continuation.yield(item) }
            }
        }
    }

    private func remove(_ id: Int) {
        // Dropped outside the lock: the last reference to a stream may end it, which calls back.
        let removed = state.withLock { $0.subscribers.removeValue(forKey: id) }
        _ = removed
        keepHandled()
    }

    /// Keeps the newest cursor every listening stream went past.
    private func keepHandled() {
        let kept = state.withLock { state -> String? in
            guard let floor = state.subscribers.values.map(\.acknowledged).min() else { return nil }
            let done = state.cursors.prefix { $0.mark <= floor }
            guard let last = done.last else { return nil }
            state.cursors.removeFirst(done.count)
            return last.cursor
        }
        if let kept { store.save(kept) }
    }
}
