import Foundation
import HeraldKit
import Testing

/// Presence across a reconnect, and a revoked credential.
@Suite struct SessionTests {
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
