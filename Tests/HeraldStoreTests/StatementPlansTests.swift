import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The statements of a chat message's path are planned once a connection, not again at every
/// run (BENCHMARKS.md, "Statements planned once a connection"): PostgreSQL plans a prepared statement for
/// its values five times, then keeps one plan if it looks no dearer; a branch chosen by a
/// parameter (`CASE WHEN $n`, `$n IS NULL OR …`) always looked dearer kept, and was planned at
/// every run. Counted by the server (`pg_prepared_statements`), on a store of one connection.
@Suite struct StatementPlansTests {
    @Test func aChatMessagesStatementsArePlannedOnceAConnection() async throws {
        try await TestDatabase.withStore(poolSize: 1) { store, _ in
            let (acme, group) = try await ChatAccessTests.crew(store)
            let dana = try await acme.run { try await $0.person(email: "dana@acme.test") }
            let runs = 8
            for n in 1...runs {
                let sent = try await acme.run {
                    try await $0.sendMessage(actor: "alice@acme.test", conversation: group, text: "m\(n)", clientID: "c\(n)", sentAt: nil)
                }
                // The same message again: found by its client id, not written twice.
                let again = try await acme.run {
                    try await $0.sendMessage(actor: "alice@acme.test", conversation: group, text: "m\(n)", clientID: "c\(n)", sentAt: nil)
                }
                #expect(again.message.id == sent.message.id)
                try await acme.run { $0.markReceived([(person: dana.id, conversation: group, sequence: sent.message.sequence)]) }
                try await store.sequenceLive()
                let head = try await store.liveHead()
                let rows = try await acme.run { try await $0.liveRows(for: nil, after: 0, through: head) }
                #expect(!rows.isEmpty)
                let conversation = try await acme.run {
                    try await $0.conversation(id: group, viewer: try await $0.person(email: "dana@acme.test"), withParticipants: false)
                }
                #expect(conversation.unread == n, "the count, in its own statement, still counts")
            }
            let plans = try await store.pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements
                    WHERE statement NOT LIKE '%pg_prepared_statements%'
                      AND (statement LIKE '%WITH written AS%' OR statement LIKE '%left_snapshot%'
                           OR statement LIKE 'SELECT * FROM (%FROM messages m JOIN people p%'
                           OR statement LIKE '%FROM live_feed f%' OR statement LIKE '%WITH moved AS%')
                    """
                ).map { try $0.decode((String, Int, Int).self) }
            }
            // Receipts, the feed read without readers, the sequencer; the conversation with and
            // without its count; a message read back by id and found by client id.
            #expect(plans.count == 7, "\(plans.map { ($0.0.prefix(90), $0.1, $0.2) })")
            for (statement, generic, custom) in plans {
                let forced = ["WITH written AS", "FROM live_feed f", "WITH moved AS"].contains { statement.contains($0) }
                // Forced to one plan a connection: never planned for its values. Otherwise at
                // most the server's five trials, then the kept plan.
                #expect(forced ? custom == 0 : custom <= 5 && generic >= 1, "\(generic) kept, \(custom) planned: \(statement.prefix(200))")
            }
        }
    }
}
