import Foundation
import HeraldKit
import Testing

/// Messages written while the server is away wait in the outbox, across the app's restart.
@Suite struct OutboxTests {
    @Test func fiveMessagesWrittenWhileTheServerIsDownArriveOnceInOrderAfterTheAppRestarts() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let other = try await Server()
        let alice = fixture.client("alice", [server])
        let conversation = try await alice.createConversation(with: [fixture.email("bob")])
        let bob = EventLog(LiveSession(client: fixture.client("bob", [other]), cursorStore: MemoryCursorStore()))
        await bob.session.start()
        try await bob.connected()

        server.kill()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("heraldkit-\(UUID().uuidString).outbox.json")
        let before = try Outbox(client: alice, store: FileOutboxStore(url: file))
        var written: [PendingMessage] = []
        for index in 1...5 { written.append(try await before.send(text: "offline \(index)", to: conversation.id)) }
        #expect(await before.pending == written)
        // The app ends before the server is back; what it wrote is in the file.
        await before.close()

        let after = try Outbox(client: alice, store: FileOutboxStore(url: file))
        #expect(await after.pending == written)
        try await server.start()
        await after.flush()
        var sent: [PendingMessage] = []
        for await outcome in after.events {
            if case .sent(let pending, _) = outcome { sent.append(pending) }
            if sent.count == 5 { break }
        }
        #expect(sent == written)
        #expect(await after.pending.isEmpty)
        #expect(try FileOutboxStore(url: file).load().isEmpty)

        try await bob.received(5)
        try await Task.sleep(for: .milliseconds(300))
        #expect(bob.messages.map(\.text) == (1...5).map { "offline \($0)" })
        #expect(bob.messages.map(\.clientId) == written.map(\.clientId))
        let stored = try await alice.messages(in: conversation.id)
        #expect(stored.map(\.text) == (1...5).map { "offline \($0)" })
        await bob.session.stop()
    }

    @Test func aMessageSentTwiceWithItsClientIdIsStoredOnce() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let alice = fixture.client("alice", [server])
        let conversation = try await alice.createConversation(with: [fixture.email("bob")])
        // The app sent it, the answer was lost, and the outbox (after a restart) sends it again.
        let pending = PendingMessage(conversation: conversation.id, text: "only once")
        let first = try await alice.send(text: pending.text, to: conversation.id, clientId: pending.clientId)
        let store = MemoryOutboxStore()
        try store.save([pending])
        let outbox = try Outbox(client: alice, store: store)
        await outbox.flush()
        for await outcome in outbox.events {
            guard case .sent(_, let message) = outcome else { continue }
            #expect(message.id == first.message.id)
            break
        }
        #expect(first.created)
        #expect(try await alice.messages(in: conversation.id).map(\.text) == ["only once"])
    }

    @Test func aMessageToAConversationThatIsGoneFailsAndTheNextOnesGo() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let alice = fixture.client("alice", [server])
        let conversation = try await alice.createConversation(with: [fixture.email("bob")])
        let outbox = try Outbox(client: alice, store: MemoryOutboxStore())
        let lost = try await outbox.send(text: "to nowhere", to: UUID())
        let kept = try await outbox.send(text: "to bob", to: conversation.id)
        var outcomes: [OutboxEvent] = []
        for await outcome in outbox.events {
            outcomes.append(outcome)
            if outcomes.count == 2 { break }
        }
        guard case .failed(lost, .notFound) = outcomes.first, case .sent(kept, _) = outcomes.last else {
            Issue.record("outcomes: \(outcomes)")
            return
        }
    }
}
