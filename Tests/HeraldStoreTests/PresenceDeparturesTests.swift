import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The count of departures that tells a live server when to check presence subscriptions again
/// (sql/0046, docs/live-protocol.md#presence): it moves when someone leaves a team or a
/// conversation, in that transaction, and with nothing else.
@Suite struct PresenceDeparturesTests {
    @Test func leavingATeamOrAConversationIsCountedAndNothingElseIs() async throws {
        try await TestDatabase.withStore { store, _ in
            let (acme, group) = try await ChatAccessTests.crew(store)
            let globex = try await WorkflowFixture.make(store, slug: "globex")
            func departures() async throws -> Int64 { try await acme.run { try await $0.presenceDepartures(since: 0).count } }
            #expect(try await departures() == 0)

            // Messages and their receipts update the participants' rows: no departure.
            let sent = try await acme.run {
                try await $0.sendMessage(actor: "alice@acme.test", conversation: group, text: "hello", clientID: nil, sentAt: nil)
            }
            try await acme.run { session in
                let dana = try await session.person(email: "dana@acme.test")
                session.markReceived([(person: dana.id, conversation: group, sequence: sent.message.sequence)])
            }
            #expect(try await departures() == 0)

            _ = try await acme.run {
                try await $0.changeConversation(actor: "chidi@acme.test", conversation: group, .remove(email: "dana@acme.test"))
            }
            #expect(try await departures() == 1)
            // Coming back is no departure.
            _ = try await acme.run { try await $0.changeConversation(actor: "chidi@acme.test", conversation: group, .add(email: "dana@acme.test")) }
            _ = try await acme.run { try await $0.changeConversation(actor: "alice@acme.test", conversation: group, .leave) }
            #expect(try await departures() == 2)

            // A rolled-back leave counts nothing.
            await #expect(throws: RolledBack.self) {
                try await acme.run { session in
                    _ = try await session.changeConversation(actor: "dana@acme.test", conversation: group, .leave)
                    throw RolledBack()
                }
            }
            #expect(try await departures() == 2)

            // Leaving team ops: the team, and its group Chidi was in.
            _ = try await acme.run { try await $0.removeMembership(team: "ops", email: "chidi@acme.test") }
            #expect(try await departures() == 4)

            // A lookup reads the count with what it found visible; another tenant's stays.
            let lookup = try await acme.run { session in
                try await session.presence(of: ["dana@acme.test"], viewer: try await session.person(email: "alice@acme.test"))
            }
            #expect(lookup.departures == 4 && lookup.people.map(\.email) == ["dana@acme.test"])
            #expect(try await globex.run { try await $0.presenceDepartures(since: 0) } == PresenceDepartures())

            // Who left, by their latest departure: Dana at 1, Alice at 2, Chidi at 4 (his team's
            // row at 3, then his group's); after 2, only Chidi.
            let (alice, chidi, dana) = try await acme.run { session in
                (
                    try await session.person(email: "alice@acme.test").id, try await session.person(email: "chidi@acme.test").id,
                    try await session.person(email: "dana@acme.test").id
                )
            }
            let all = try await acme.run { try await $0.presenceDepartures(since: 0) }
            #expect(all == PresenceDepartures(count: 4, departed: [dana: 1, alice: 2, chidi: 4]), "\(all)")
            #expect(try await acme.run { try await $0.presenceDepartures(since: 2) } == PresenceDepartures(count: 4, departed: [chidi: 4]))
            #expect(try await acme.run { try await $0.presenceDepartures(since: 4) } == PresenceDepartures(count: 4, departed: [:]))
        }
    }

    /// Every departure tells the live servers at once, with its tenant's id, when it commits
    /// (sql/0047): a conversation left as much as a team; a rejoin, a rolled-back leave and a
    /// message tell nothing. Notifications arrive in commit order, so a marker sent after each
    /// step shows what the step told.
    @Test func everyDepartureTellsTheLiveServersWhenItCommits() async throws {
        try await TestDatabase.withStore { store, _ in
            let (acme, group) = try await ChatAccessTests.crew(store)
            let listener = LiveListener(store: store, logger: testLogger)
            defer { listener.stop() }
            var events = listener.events.makeAsyncIterator()
            while let event = await events.next(), event != .connected(reconnected: false) {}
            let markerTenant = UUID()
            let marker = LiveListener.Event.membership(tenant: markerTenant)
            /// The departures told by `step`: membership events up to the marker sent after it.
            func told(after step: () async throws -> Void) async throws -> [LiveListener.Event] {
                try await step()
                _ = try await acme.run { session in
                    try await session.connection.query(
                        "SELECT pg_notify(\(LiveListener.membershipChannel), \(markerTenant.lowercasedString))")
                }
                var seen: [LiveListener.Event] = []
                while let event = await events.next(), event != marker {
                    if case .membership = event { seen.append(event) }
                }
                return seen
            }
            let membership = LiveListener.Event.membership(tenant: acme.tenant.id)

            #expect(
                try await told {
                    _ = try await acme.run {
                        try await $0.sendMessage(actor: "alice@acme.test", conversation: group, text: "hello", clientID: nil, sentAt: nil)
                    }
                } == [])
            #expect(
                try await told { _ = try await acme.run { try await $0.changeConversation(actor: "dana@acme.test", conversation: group, .leave) } }
                    == [membership])
            #expect(
                try await told {
                    _ = try await acme.run {
                        try await $0.changeConversation(actor: "chidi@acme.test", conversation: group, .add(email: "dana@acme.test"))
                    }
                } == [])
            #expect(
                try await told {
                    _ = try await acme.run {
                        try await $0.changeConversation(actor: "chidi@acme.test", conversation: group, .remove(email: "dana@acme.test"))
                    }
                } == [membership])
            #expect(
                try await told {
                    await #expect(throws: RolledBack.self) {
                        try await acme.run { session in
                            _ = try await session.changeConversation(actor: "chidi@acme.test", conversation: group, .leave)
                            throw RolledBack()
                        }
                    }
                } == [])
            // A team and its group in one transaction: told once.
            #expect(
                try await told { _ = try await acme.run { try await $0.removeMembership(team: "ops", email: "chidi@acme.test") } } == [membership])
        }
    }

    struct RolledBack: Error {}
}
