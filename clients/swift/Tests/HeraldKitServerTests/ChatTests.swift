import Foundation
import HeraldKit
import Testing

/// Two and three people chat through the library against a real `herald serve`.
@Suite struct ChatTests {
    @Test func twoPeopleChatAndTheSendersStatusGoesSentDeliveredRead() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let alice = fixture.client("alice", [server])
        let bob = fixture.client("bob", [server])
        let conversation = try await alice.createConversation(with: [fixture.email("bob")])
        let outbox = try Outbox(client: alice, store: MemoryOutboxStore())
        let aliceLive = EventLog(LiveSession(client: alice, cursorStore: MemoryCursorStore(), outbox: outbox))
        let bobLive = EventLog(LiveSession(client: bob, cursorStore: MemoryCursorStore()))
        await aliceLive.session.start()
        await bobLive.session.start()
        try await aliceLive.wait(for: "alice connected") { $0.contains(.connection(.connected(person: fixture.email("alice")))) ? true : nil }
        try await bobLive.wait(for: "bob connected") { $0.contains(.connection(.connected(person: fixture.email("bob")))) ? true : nil }

        let pending = try await outbox.send(text: "Dinner at 7?", to: conversation.id)
        #expect(await outbox.pending == [pending])
        let received = try await bobLive.wait(for: "bob's message") { events in
            events.lazy.compactMap { event -> Message? in
                if case .message(conversation.id, let message) = event, message.text == "Dinner at 7?" { return message } else { return nil }
            }.first
        }
        #expect(received.clientId == pending.clientId && received.sender.email == fixture.email("alice"))

        // Bob's socket was written the message: delivered. Bob reads it: read.
        let statuses = { (events: [LiveEvent]) -> [MessageStatus] in
            events.compactMap { if case .status(conversation.id, received.id, _, let status) = $0 { status } else { nil } }
        }
        try await aliceLive.wait(for: "delivered") { statuses($0).contains(.delivered) ? true : nil }
        await bobLive.session.read(conversation.id, upTo: received.sequence)
        try await aliceLive.wait(for: "read") { statuses($0).contains(.read) ? true : nil }
        #expect(statuses(aliceLive.all) == [.sent, .delivered, .read])
        // The server agrees.
        let stored = try await alice.messages(in: conversation.id, receipts: true)
        #expect(stored.map(\.status) == [.read])
        await aliceLive.session.stop()
        await bobLive.session.stop()
    }

    /// After a restart (or a chat opened from a push) the app loads the conversation over REST:
    /// its messages' receipts feed the session, and Bob's later read ticks them.
    @Test func aConversationLoadedAfterARestartShowsReadTicks() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let alice = fixture.client("alice", [server])
        let bob = fixture.client("bob", [server])
        let conversation = try await alice.createConversation(with: [fixture.email("bob")])
        let (sent, _) = try await alice.send(text: "Before the restart", to: conversation.id)
        try await bob.markReceived(conversation.id)

        // The app starts again: a new session, and the page it shows.
        let aliceLive = EventLog(LiveSession(client: alice, cursorStore: MemoryCursorStore()))
        await aliceLive.session.start()
        try await aliceLive.connected()
        let page = try await alice.messages(in: conversation.id, receipts: true)
        #expect(page.map(\.status) == [.delivered])
        await aliceLive.session.track(page, in: conversation.id)

        try await bob.markRead(conversation.id)
        let statuses = { (events: [LiveEvent]) -> [MessageStatus] in
            events.compactMap { if case .status(conversation.id, sent.id, _, let status) = $0 { status } else { nil } }
        }
        try await aliceLive.wait(for: "read") { statuses($0).contains(.read) ? true : nil }
        #expect(statuses(aliceLive.all) == [.read], "from delivered, as the page said, to read")
        await aliceLive.session.stop()
    }

    @Test func inAGroupAMessageIsDeliveredAndReadOnlyOnceEveryoneElseIs() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let alice = fixture.client("alice", [server])
        let group = try await alice.createConversation(with: [fixture.email("bob"), fixture.email("carol")], name: "Dinner", team: "crew")
        let aliceLive = EventLog(LiveSession(client: alice, cursorStore: MemoryCursorStore()))
        let bobLive = EventLog(LiveSession(client: fixture.client("bob", [server]), cursorStore: MemoryCursorStore()))
        for log in [aliceLive, bobLive] { await log.session.start() }
        for log in [aliceLive, bobLive] {
            try await log.connected()
        }
        let (message, _) = try await alice.send(text: "Who brings dessert?", to: group.id, clientId: "c-1")
        let receiptFrom = { (person: String, events: [LiveEvent]) -> Int? in
            events.firstIndex {
                if case .receipt(let receipt) = $0 { receipt.person == person && (receipt.received ?? 0) >= message.sequence } else { false }
            }
        }
        let statuses = { (events: [LiveEvent]) -> [MessageStatus] in
            events.compactMap { if case .status(group.id, message.id, _, let status) = $0 { status } else { nil } }
        }
        // Bob's socket received it; Carol's apps have not: still only sent.
        let bobReceived = try await aliceLive.wait(for: "bob's receipt") { receiptFrom(fixture.email("bob"), $0) }
        #expect(!statuses(Array(aliceLive.all.prefix(bobReceived + 1))).contains(.delivered))
        // Carol's app says it received it over REST (a push woke it): delivered.
        try await fixture.client("carol", [server]).markReceived(group.id)
        try await aliceLive.wait(for: "delivered") { statuses($0).contains(.delivered) ? true : nil }
        await bobLive.session.read(group.id, upTo: message.sequence)
        let bobRead = try await aliceLive.wait(for: "bob's read") { events in
            events.firstIndex {
                if case .receipt(let receipt) = $0 { receipt.person == fixture.email("bob") && receipt.read == message.sequence } else { false }
            }
        }
        #expect(!statuses(Array(aliceLive.all.prefix(bobRead + 1))).contains(.read))
        try await fixture.client("carol", [server]).markRead(group.id)
        try await aliceLive.wait(for: "read") { statuses($0).contains(.read) ? true : nil }
        #expect(statuses(aliceLive.all) == [.sent, .delivered, .read])
        for log in [aliceLive, bobLive] { await log.session.stop() }
    }
}
