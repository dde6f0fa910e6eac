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
                try await session.markReceived([(person: dana.id, conversation: group, sequence: sent.message.sequence)])
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

    struct RolledBack: Error {}
}
