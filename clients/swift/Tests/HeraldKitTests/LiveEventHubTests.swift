import Foundation
import Testing

@testable import HeraldKit

/// A live session's events to many consumers: each its own stream, the cursor kept once all
/// that got a frame handled it.
struct LiveEventHubTests {
    /// An event a test can tell apart.
    static func event(_ number: Int) -> LiveEvent { .typing(conversation: UUID(), person: "p\(number)") }

    static func names(_ events: [LiveEvent]) -> [String] {
        events.map { if case .typing(_, let person) = $0 { person } else { "?" } }
    }

    /// `count` events of a stream (its consumer then asks no further).
    static func take(_ count: Int, from iterator: inout LiveSession.Iterator) async -> [LiveEvent] {
        var taken: [LiveEvent] = []
        while taken.count < count, let event = await iterator.next() { taken.append(event) }
        return taken
    }

    /// Each iteration a stream of the hub's, as a session's are.
    struct Streams: AsyncSequence {
        let hub: LiveEventHub
        func makeAsyncIterator() -> LiveSession.Iterator { LiveEventHubTests.iterator(hub) }
    }

    static func iterator(_ hub: LiveEventHub) -> LiveSession.Iterator {
        let (id, stream) = hub.subscribe()
        return LiveSession.Iterator(base: stream.makeAsyncIterator(), hub: hub, id: id)
    }

    @Test func twoConsumersEachGetEveryEventAndTheCursorWaitsForBoth() async {
        let store = MemoryCursorStore()
        let hub = LiveEventHub(store: store)
        var chat = Self.iterator(hub)
        var badge = Self.iterator(hub)
        for number in 1...3 {
            hub.yield(Self.event(number))
            hub.handled(cursor: "c\(number)")
        }
        #expect(Self.names(await Self.take(3, from: &chat)) == ["p1", "p2", "p3"])
        // The chat screen asked past the first two frames; the badge has handled nothing yet.
        #expect(store.load() == nil)
        #expect(Self.names(await Self.take(2, from: &badge)) == ["p1", "p2"])
        #expect(store.load() == "c1", "both went past the first frame only")
        hub.yield(Self.event(4))
        hub.handled(cursor: "c4")
        #expect(Self.names(await Self.take(2, from: &badge)) == ["p3", "p4"])
        #expect(Self.names(await Self.take(1, from: &chat)) == ["p4"])
        #expect(store.load() == "c3")
    }

    @Test func aConsumerThatStopsStopsNothingElse() async throws {
        let store = MemoryCursorStore()
        let hub = LiveEventHub(store: store)
        let seen = Locked<[String]>([])
        let stopping = Task {
            for await _ in Streams(hub: hub) { try? await Task.sleep(for: .seconds(3600)) }
        }
        var staying = Self.iterator(hub)
        while hub.listeners < 2 { await Task.yield() }
        hub.yield(Self.event(1))
        hub.handled(cursor: "c1")
        stopping.cancel()
        _ = await stopping.value
        hub.yield(Self.event(2))
        hub.handled(cursor: "c2")
        hub.yield(Self.event(3))
        let names = Self.names(await Self.take(3, from: &staying))
        seen.withLock { $0 = names }
        #expect(seen.current == ["p1", "p2", "p3"])
        // Only the staying stream counts now: it went past both frames.
        #expect(store.load() == "c2")
    }

    @Test func eventsWithNobodyListeningWaitForTheNextStreamAndTheEndReachesAll() async {
        let store = MemoryCursorStore()
        let hub = LiveEventHub(store: store)
        hub.yield(Self.event(1))
        hub.handled(cursor: "c1")
        var first = Self.iterator(hub)
        var late = Self.iterator(hub)
        hub.yield(Self.event(2))
        hub.finish()
        #expect(Self.names(await Self.take(5, from: &first)) == ["p1", "p2"])
        #expect(Self.names(await Self.take(5, from: &late)) == ["p2"], "a stream starts where it starts")
        #expect(store.load() == "c1")
        var after = Self.iterator(hub)
        let next = await after.next()
        #expect(next.map { _ in true } == nil, "a finished session's new streams end at once")
    }
}
