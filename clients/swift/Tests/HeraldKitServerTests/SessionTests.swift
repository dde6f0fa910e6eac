import Foundation
import Testing

@testable import HeraldKit

/// Presence across a reconnect, and a revoked credential.
@Suite struct SessionTests {
    /// A chat screen and a badge listen to one session: each sees every message, and the
    /// cursor a restart resumes from is past what both handled.
    @Test func twoConsumersOfOneSessionEachSeeEveryEvent() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let alice = fixture.client("alice", [server])
        let conversation = try await alice.createConversation(with: [fixture.email("bob")])
        let cursor = MemoryCursorStore()
        let session = LiveSession(client: fixture.client("bob", [server]), cursorStore: cursor)
        let chat = EventLog(session)
        let badge = EventLog(session)
        await session.start()
        for log in [chat, badge] {
            try await log.wait(for: "bob connected") { $0.contains(.connection(.connected(person: fixture.email("bob")))) ? true : nil }
        }
        try await ResumeTests.write(4, from: alice, to: conversation.id)
        try await chat.received(4)
        try await badge.received(4)
        #expect(chat.messages.map(\.text) == ["line 1", "line 2", "line 3", "line 4"])
        #expect(badge.messages.map(\.text) == chat.messages.map(\.text))
        // Both loops asked past the fourth message's frame but for the last: the cursor is kept.
        #expect(cursor.load() != nil)
        await session.stop()
    }

    /// A socket hears of a conversation peer's changes, not their state when it opens: the
    /// session reads that once a connection, so Bob sees Alice online without her changing.
    @Test func aConversationPeersPresenceIsThereAtConnect() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let alice = EventLog(LiveSession(client: fixture.client("alice", [server]), cursorStore: MemoryCursorStore()))
        await alice.session.start()
        try await alice.connected()
        let bobClient = fixture.client("bob", [server])
        let conversation = try await bobClient.createConversation(with: [fixture.email("alice")])
        let bob = EventLog(LiveSession(client: bobClient, cursorStore: MemoryCursorStore()))
        await bob.session.track(conversation)
        await bob.session.start()
        try await bob.wait(for: "alice online") { events in
            events.contains {
                if case .presence(let people) = $0 { people.contains { $0.person == fixture.email("alice") && $0.online } } else { false }
            } ? true : nil
        }
        await bob.session.stop()
        await alice.session.stop()
    }

    @Test func presenceFollowsTheSubscriptionAcrossAReconnect() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let other = try await Server()
        // Bob and Dave share the team and no conversation: Bob hears of Dave only by subscribing.
        let bob = EventLog(LiveSession(client: fixture.client("bob", [server]), cursorStore: MemoryCursorStore()))
        await bob.session.subscribe(to: [fixture.email("dave")])
        await bob.session.start()
        let daveIs = { (online: Bool, events: ArraySlice<LiveEvent>) -> Bool in
            events.contains {
                if case .presence(let people) = $0 { people.contains { $0.person == fixture.email("dave") && $0.online == online } } else { false }
            }
        }
        try await bob.wait(for: "dave offline") { daveIs(false, $0[...]) ? true : nil }

        server.kill()
        try await bob.wait(for: "the drop") { $0.contains { if case .connection(.waiting) = $0 { true } else { false } } ? true : nil }
        try await server.start()
        // Connected again, and told of Dave again: the library subscribed for the app.
        let reconnected = try await bob.wait(for: "a second connection") { events in
            let connected = events.indices.filter { if case .connection(.connected) = events[$0] { true } else { false } }
            return connected.count >= 2 ? connected[1] : nil
        }
        try await bob.wait(for: "dave offline again") { daveIs(false, $0[reconnected...]) ? true : nil }

        let dave = EventLog(LiveSession(client: fixture.client("dave", [other]), cursorStore: MemoryCursorStore()))
        await dave.session.start()
        try await bob.wait(for: "dave online") { daveIs(true, $0[reconnected...]) ? true : nil }
        await dave.session.stop()
        await bob.session.stop()
    }

    @Test func aDeviceThatIsNotThePersonsEndsTheSessionAndACursorNotTakenStartsAfresh() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let bob = fixture.client("bob", [server])
        let wrong = EventLog(LiveSession(client: bob, cursorStore: MemoryCursorStore(), device: "no-such-device"))
        await wrong.session.start()
        #expect(await wrong.finished)
        guard case .connection(.ended(.refused(422, let detail)))? = wrong.all.last else {
            Issue.record("events: \(wrong.all)")
            return
        }
        #expect(!detail.isEmpty && wrong.connections == 1)

        // A registered phone is taken.
        let token = "fcm-\(UUID().uuidString)"
        try await bob.register(.fcm(token: token, app: .member, platform: "android"))
        let phone = EventLog(LiveSession(client: bob, cursorStore: MemoryCursorStore("garbage"), device: token))
        await phone.session.start()
        try await phone.connected()
        #expect(phone.all.contains(.resync(reason: "cursor_refused")))
        await phone.session.stop()
    }

    /// iOS hands the APNs token over after launch: the session started without a device is
    /// given it, reconnects for it, and from then on the app in the foreground has its chat
    /// pushes skipped (`herald why` says the app showed the message live).
    @Test func aDeviceAttachedAfterConnectingIsUsedForForegroundSuppression() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let alice = fixture.client("alice", [server])
        let bobClient = fixture.client("bob", [server])
        let conversation = try await alice.createConversation(with: [fixture.email("bob")])
        let bob = EventLog(LiveSession(client: bobClient, cursorStore: MemoryCursorStore()))
        await bob.session.foreground(true)
        await bob.session.start()
        try await bob.connected()
        /// Sends a message and fans it out: whether its push to the phone was skipped as shown live.
        func skippedAsLive(_ text: String) async throws -> Bool {
            let (message, _) = try await alice.send(text: text, to: conversation.id)
            // It fans the message out, then exits 1: no push provider is configured here, so a
            // push not skipped stays queued ("held back"). `why` says which it was.
            _ = try? await Herald.run(["dispatch", "--drain"], tenant: fixture.tenant)
            let why = try await Herald.run(["why", "--message", message.id.uuidString, "--as", fixture.email("bob")], tenant: fixture.tenant)
            return why.contains("live: the app was open in the foreground")
        }
        let token = "fcm-\(UUID().uuidString)"
        _ = try await bobClient.register(.fcm(token: token, app: .member, platform: "android"))
        #expect(try await !skippedAsLive("before"), "a session that speaks for no device skips no push")

        await bob.session.attach(device: token)
        try await bob.connected(2)
        // The server hears the foreground again on the new connection; each try waits for a fan-out.
        var skipped = false
        for attempt in 1...100 where !skipped { skipped = try await skippedAsLive("after \(attempt)") }
        #expect(skipped)
        #expect(bob.connections == 2)
        await bob.session.stop()
    }

    /// The app's backend replaces Bob's token mid-session and revokes the old one: the
    /// session asks the provider, goes on with the new token after its cursor, and loses
    /// nothing; REST calls go on too.
    @Test func aTokenRevokedAndReplacedMidSessionLosesNothing() async throws {
        var fixture = try await Fixture()
        let server = try await Server()
        let alice = fixture.client("alice", [server])
        let conversation = try await alice.createConversation(with: [fixture.email("bob")])
        let current = Locked(fixture.token("bob"))
        let asked = Locked(0)
        let bobClient = HeraldClient(
            HeraldClient.Configuration(
                servers: [server.url],
                tokenProvider: { _ in
                    asked.withLock { $0 += 1 }
                    return current.current
                }, timeout: .seconds(20)))
        let bob = EventLog(LiveSession(client: bobClient, cursorStore: MemoryCursorStore()))
        await bob.session.start()
        try await bob.connected()
        try await ResumeTests.write(1, from: alice, to: conversation.id)
        try await bob.received(1)

        let old = try #require(fixture.tokenIDs["bob"])
        try await fixture.addToken("bob")
        current.withLock { $0 = fixture.token("bob") }
        try await Herald.run(["token", "revoke", old], tenant: fixture.tenant)
        try await bob.connected(2)
        for index in 2...3 { _ = try await alice.send(text: "line \(index)", to: conversation.id, clientId: "line-\(index)") }
        try await bob.received(3)
        #expect(bob.messages.map(\.text) == ["line 1", "line 2", "line 3"])
        #expect(!bob.all.contains { if case .connection(.ended) = $0 { true } else { false } })
        #expect(try await bobClient.me().person?.email == fixture.email("bob"))
        // The outbox sends with the new one too.
        let outbox = try Outbox(client: bobClient, store: MemoryOutboxStore())
        let pending = try await outbox.send(text: "from bob", to: conversation.id)
        var outcome: OutboxEvent?
        for await event in outbox.events {
            outcome = event
            break
        }
        #expect(outcome.map { if case .sent(pending, _) = $0 { true } else { false } } == true, "\(String(describing: outcome))")
        #expect(await outbox.pending.isEmpty)
        #expect(asked.current == 2, "once for the first token, once for the revoked one")
        await bob.session.stop()
    }

    /// What an iPhone's transport reads of a refused upgrade (URLSession keeps no body of it):
    /// the same request as a plain GET, with its problem document, so that a 422 naming `after`
    /// resyncs there as it does on Linux.
    @Test func aRefusedUpgradesProblemIsReadTheSameWayWithURLSession() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        var components = try #require(URLComponents(url: server.url, resolvingAgainstBaseURL: false))
        components.scheme = "ws"
        components.path = "/v1/live"
        components.percentEncodedQuery = "after=not-a-cursor"
        let url = try #require(components.url)
        let headers = [(name: "Authorization", value: "Bearer \(fixture.token("bob"))")]
        let body = await URLSessionWebSocketTransport.refusalBody(of: url, headers: headers, status: 422, session: .shared, timeout: .seconds(20))
        let problem = try JSONCoding.decoder.decode(Problem.self, from: body)
        #expect(problem.status == 422 && problem.errors?.first?.field == "after", "\(problem)")
        // An answer of another status than the refusal's is not taken for it.
        #expect(
            await URLSessionWebSocketTransport.refusalBody(of: url, headers: headers, status: 429, session: .shared, timeout: .seconds(20)).isEmpty)
    }

    @Test func aRevokedTokenEndsTheSessionWithUnauthorizedAndNoReconnecting() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let alice = EventLog(LiveSession(client: fixture.client("alice", [server]), cursorStore: MemoryCursorStore()))
        await alice.session.start()
        try await alice.connected()
        try await fixture.revoke("alice")
        try await alice.wait(for: "the end") { $0.contains(.connection(.ended(.unauthorized))) ? true : nil }
        // The events end: nothing more will come, and it connected once.
        #expect(await alice.finished)
        #expect(alice.connections == 1)
        #expect(await alice.session.state == .ended(.unauthorized))

        // Started again with that token: refused at once, the same way.
        let again = EventLog(LiveSession(client: fixture.client("alice", [server]), cursorStore: MemoryCursorStore()))
        await again.session.start()
        #expect(await again.finished)
        #expect(again.all == [.connection(.connecting), .connection(.ended(.unauthorized))])
        // And REST says so as a typed error.
        await #expect {
            try await fixture.client("alice", [server]).me()
        } throws: { error in
            if case HeraldError.unauthorized = error { true } else { false }
        }
    }
}
