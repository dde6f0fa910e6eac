import Foundation
import HeraldCore
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldLive
@testable import HeraldStore

/// The hub's rounds against a real database: a frame is delivered or the round runs again from
/// the same cursor, never skipped.
@Suite struct LiveRoundTests {
    /// A connection that keeps what is written to it.
    final class RecordingConnection: LiveConnection {
        let texts = Mutex<[String]>([])

        func write(_ texts: [String], written: @escaping @Sendable () -> Void) {
            self.texts.withLock { $0 += texts }
            written()
        }
        func ping() {}
        func pong(_ data: [UInt8]) {}
        func close(code: UInt16, reason: String, answering: Bool) {}
        func drop() {}

        /// The types of the frames written, in order.
        var types: [String] {
            texts.withLock { $0 }.compactMap { text in
                (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["type"] as? String
            }
        }
    }

    /// The conversation frame is read for each reader; when the database fails it, the round
    /// fails and leaves the cursor, and the next round gives it (and what came with it) once.
    @Test func aConversationFrameTheDatabaseFailedComesWithTheNextRound() async throws {
        try await TestDatabase.withStore { store, _ in
            let tenant = try await store.createTenant(slug: "rounds", name: "Rounds")
            let bob = try await store.withTenant(tenant) { session in
                _ = try await session.createTeam(slug: "ops", name: "Ops")
                var people: [Person] = []
                for name in ["alice", "bob", "carol"] {
                    people.append(try await session.addPerson(email: "\(name)@rounds.test", name: name.capitalized))
                    _ = try await session.setMembership(team: "ops", email: "\(name)@rounds.test", role: .member)
                }
                return people[1]
            }
            let hub = LiveHub(store: store, logger: testLogger)
            let (head, horizon) = try await store.livePositions()
            hub.machine.withLock { $0.start(at: head) }
            let connection = RecordingConnection()
            let plan = LivePlan(tenant: tenant, person: bob, credentialID: UUID(), after: nil, device: nil, head: head, horizon: horizon)
            let socket = hub.socket(for: plan, on: connection)
            hub.register(socket, plan: plan)
            try await hub.round()
            #expect(connection.types == ["hello"])

            _ = try await store.withTenant(tenant) { session in
                try await session.createConversation(
                    actor: "alice@rounds.test", with: ["bob@rounds.test", "carol@rounds.test"], name: "Night shift", photoURL: nil, team: "ops")
            }
            _ = try await store.sequenceLive()
            // Reading the conversation for Bob fails (its team cannot be read for a moment).
            try await store.pool.query("ALTER TABLE teams RENAME TO teams_away")
            await #expect(throws: (any Error).self) { try await hub.round() }
            #expect(!connection.types.contains("conversation"))
            try await store.pool.query("ALTER TABLE teams_away RENAME TO teams")
            try await hub.round()
            #expect(connection.types.filter { $0 == "conversation" }.count == 1, "\(connection.types)")
            #expect(connection.types.filter { $0 == "message" }.count == 1, "the group's first message, once: \(connection.types)")
            try await hub.round()
            #expect(connection.types.filter { $0 == "conversation" }.count == 1, "not again")
        }
    }

    /// What a round wrote to a group's sockets comes back to the sender as one feed row (the
    /// sequencer moves one row, not one a reader), each receipt still a frame with a cursor of
    /// its own; a socket that resumes from a cursor inside that row gets the rest of it, once.
    @Test func aRoundsReceiptsAreOneRowAndEachFrameKeepsItsOwnCursor() async throws {
        try await TestDatabase.withStore { store, _ in
            let tenant = try await store.createTenant(slug: "batches", name: "Batches")
            let names = ["alice", "bob", "carol", "dan"]
            let people = try await store.withTenant(tenant) { session in
                _ = try await session.createTeam(slug: "ops", name: "Ops")
                var people: [Person] = []
                for name in names {
                    people.append(try await session.addPerson(email: "\(name)@batches.test", name: name.capitalized))
                    _ = try await session.setMembership(team: "ops", email: "\(name)@batches.test", role: .member)
                }
                return people
            }
            let group = try await store.withTenant(tenant) { session in
                try await session.createConversation(
                    actor: "alice@batches.test", with: names.dropFirst().map { "\($0)@batches.test" }, name: "Night shift", photoURL: nil,
                    team: "ops")
            }.id
            _ = try await store.sequenceLive()
            let hub = LiveHub(store: store, logger: testLogger)
            let (head, horizon) = try await store.livePositions()
            hub.machine.withLock { $0.start(at: head) }
            var connections: [RecordingConnection] = []
            for person in people {
                let connection = RecordingConnection()
                let plan = LivePlan(tenant: tenant, person: person, credentialID: UUID(), after: nil, device: nil, head: head, horizon: horizon)
                let socket = hub.socket(for: plan, on: connection)
                hub.register(socket, plan: plan)
                connections.append(connection)
            }
            try await hub.round()
            _ = try await store.withTenant(tenant) { session in
                try await session.sendMessage(actor: "alice@batches.test", conversation: group, text: "all hands", clientID: nil, sentAt: nil)
            }
            _ = try await store.sequenceLive()
            let sent = try await store.liveHead()
            // Written to the three others' sockets: their receipts, one row for Alice.
            try await hub.round()
            #expect(try await store.sequenceLive() == 1)
            let end = try await store.liveHead()
            #expect(end == sent + 3, "a position a receipt")
            try await hub.round()

            func receipts(_ connection: RecordingConnection) -> [(cursor: Int64, person: String)] {
                connection.texts.withLock { $0 }.compactMap { text in
                    guard let frame = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                        frame["type"] as? String == "receipt",
                        let cursor = (frame["cursor"] as? String).flatMap({ Int64($0) }), let person = frame["person"] as? String
                    else { return nil }
                    return (cursor, person)
                }
            }
            let toAlice = receipts(connections[0])
            #expect(toAlice.map(\.cursor) == [sent + 1, sent + 2, sent + 3])
            #expect(toAlice.map(\.person) == ["bob@batches.test", "carol@batches.test", "dan@batches.test"])
            for other in connections.dropFirst() { #expect(receipts(other).isEmpty, "a delivery's receipt is its sender's alone") }

            // Alice's other phone resumes from the first receipt's cursor: the two after it, once.
            let phone = RecordingConnection()
            let plan = LivePlan(tenant: tenant, person: people[0], credentialID: UUID(), after: sent + 1, device: nil, head: end, horizon: horizon)
            let socket = hub.socket(for: plan, on: phone)
            hub.register(socket, plan: plan)
            try await hub.round()
            try await hub.round()
            #expect(receipts(phone).map(\.cursor) == [sent + 2, sent + 3])
            #expect(receipts(phone).map(\.person) == ["carol@batches.test", "dan@batches.test"])
        }
    }
}
