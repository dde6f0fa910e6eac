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
}
