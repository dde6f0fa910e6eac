import Foundation
import HeraldKit
import Testing

/// Servers die under a session: nothing is missed, nothing repeated.
@Suite struct ResumeTests {
    /// Alice writes `count` messages through `through`, a little apart, while `during` runs.
    static func write(_ count: Int, from alice: HeraldClient, to conversation: UUID) async throws {
        for index in 1...count {
            _ = try await alice.send(text: "line \(index)", to: conversation, clientId: "line-\(index)")
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Every line, once each, in order.
    static func expectEveryLineOnce(_ log: EventLog, count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await log.received(count)
        // A little longer: a repeat would come right behind.
        try await Task.sleep(for: .milliseconds(500))
        #expect(log.messages.map(\.text) == (1...count).map { "line \($0)" }, sourceLocation: sourceLocation)
        let sequences = log.messages.map(\.sequence)
        #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 }, sourceLocation: sourceLocation)
    }

    @Test func aServerKilledMidStreamAndStartedAgainLosesAndRepeatsNothing() async throws {
        let fixture = try await Fixture()
        let live = try await Server()
        let other = try await Server()
        let alice = fixture.client("alice", [other])
        let conversation = try await alice.createConversation(with: [fixture.email("bob")])
        let bob = EventLog(LiveSession(client: fixture.client("bob", [live]), cursorStore: MemoryCursorStore()))
        await bob.session.start()
        try await bob.connected()

        let writer = Task { try await Self.write(40, from: alice, to: conversation.id) }
        try await bob.received(10)
        live.kill()
        try await bob.wait(for: "the drop") { $0.contains { if case .connection(.waiting) = $0 { true } else { false } } ? true : nil }
        try await live.start()
        try await writer.value
        try await Self.expectEveryLineOnce(bob, count: 40)
        #expect(bob.all.count { if case .connection(.connected) = $0 { true } else { false } } >= 2)
        await bob.session.stop()
    }

    @Test func aSecondServerTakesOverWhenTheFirstDies() async throws {
        let fixture = try await Fixture()
        let first = try await Server()
        let second = try await Server()
        let alice = fixture.client("alice", [second])
        let conversation = try await alice.createConversation(with: [fixture.email("bob")])
        // Bob's app knows both addresses; it speaks to the first while it answers.
        let bobClient = fixture.client("bob", [first, second])
        let bob = EventLog(LiveSession(client: bobClient, cursorStore: MemoryCursorStore()))
        await bob.session.start()
        try await bob.connected()
        #expect(bobClient.currentServer == first.url)

        let writer = Task { try await Self.write(40, from: alice, to: conversation.id) }
        try await bob.received(10)
        first.kill()
        try await writer.value
        try await Self.expectEveryLineOnce(bob, count: 40)
        #expect(bobClient.currentServer == second.url)
        await bob.session.stop()
    }

    @Test func anAppThatEndsWhileHandlingAMessageGetsItAgainAfterItsRestart() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let alice = fixture.client("alice", [server])
        let conversation = try await alice.createConversation(with: [fixture.email("bob")])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("heraldkit-\(UUID().uuidString).cursor")
        let first = LiveSession(client: fixture.client("bob", [server]), cursorStore: FileCursorStore(url: file))
        await first.start()
        var events = first.makeAsyncIterator()
        while let event = await events.next() { if case .connection(.connected) = event { break } }
        try await Self.write(3, from: alice, to: conversation.id)
        var handled: [String] = []
        while let event = await events.next() {
            guard case .message(_, let message) = event else { continue }
            handled.append(message.text)
            // It ends while handling the second: it never asks for the next event.
            if handled.count == 2 { break }
        }
        await first.stop()

        let second = EventLog(LiveSession(client: fixture.client("bob", [server]), cursorStore: FileCursorStore(url: file)))
        await second.session.start()
        try await second.received(2)
        try await Task.sleep(for: .milliseconds(300))
        #expect(handled == ["line 1", "line 2"])
        #expect(second.messages.map(\.text) == ["line 2", "line 3"])
        await second.session.stop()
    }

    @Test func aServerThatFreezesIsLeftAfterTwoQuietHeartbeatsAndTheNextOneGoesOn() async throws {
        let fixture = try await Fixture()
        let first = try await Server()
        let second = try await Server()
        let alice = fixture.client("alice", [second])
        let conversation = try await alice.createConversation(with: [fixture.email("bob")])
        let bobClient = fixture.client("bob", [first, second])
        let bob = EventLog(LiveSession(client: bobClient, cursorStore: MemoryCursorStore()))
        await bob.session.start()
        try await bob.connected()
        try await Self.write(5, from: alice, to: conversation.id)
        try await bob.received(5)

        // Nothing closes the socket: only the silence tells (a heartbeat of 5 s here).
        first.freeze()
        defer { first.kill() }
        let writer = Task {
            for index in 6...10 {
                _ = try await alice.send(text: "line \(index)", to: conversation.id, clientId: "line-\(index)")
                try await Task.sleep(for: .seconds(1))
            }
        }
        try await bob.wait(for: "the frozen connection given up") {
            $0.contains { if case .connection(.waiting(_, nil)) = $0 { true } else { false } } ? true : nil
        }
        try await writer.value
        try await Self.expectEveryLineOnce(bob, count: 10)
        #expect(bobClient.currentServer == second.url)
        await bob.session.stop()
    }

    @Test func aCursorKeptInAFileResumesANewSessionWhereTheLastStopped() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let alice = fixture.client("alice", [server])
        let conversation = try await alice.createConversation(with: [fixture.email("bob")])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("heraldkit-\(UUID().uuidString).cursor")
        let first = EventLog(LiveSession(client: fixture.client("bob", [server]), cursorStore: FileCursorStore(url: file)))
        await first.session.start()
        try await first.connected()
        try await Self.write(3, from: alice, to: conversation.id)
        try await first.received(3)
        await first.session.stop()
        // While the app is closed: two more. The next launch gets those two, and only those.
        _ = try await alice.send(text: "line 4", to: conversation.id)
        _ = try await alice.send(text: "line 5", to: conversation.id)
        let second = EventLog(LiveSession(client: fixture.client("bob", [server]), cursorStore: FileCursorStore(url: file)))
        await second.session.start()
        try await second.received(2)
        try await Task.sleep(for: .milliseconds(300))
        #expect(second.messages.map(\.text) == ["line 4", "line 5"])
        await second.session.stop()
    }
}
