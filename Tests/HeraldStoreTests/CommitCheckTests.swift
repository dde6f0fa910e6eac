import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// (docs/operating/failover.md) A workflow change whose `COMMIT` went unanswered (the connection died
/// during it, as in a failover) ends with its outbox event written exactly once.
@Suite struct CommitCheckTests {
    /// The first commit that writes an outbox event sleeps in a deferred trigger until the
    /// test terminates its backend: it did not commit. The store finds the event's key free,
    /// runs the assignment again, and there is one activity and one event.
    @Test func anAssignmentWhoseCommitWasCutOffIsWrittenOnce() async throws {
        try await TestDatabase.withStore { store, configuration in
            let fixture = try await WorkflowFixture.make(store)
            let before = try await fixture.footprint()
            try await store.pool.withConnection { try await $0.executeScript(SleepingCommit.script(on: "outbox")) }
            let killer = Task { try await SleepingCommit.terminate(configuration) }
            let assigned = try await fixture.assign()
            #expect(try await killer.value)
            let after = try await fixture.footprint()
            // activities, activity_transitions and outbox each gained one row; nothing else changed.
            #expect(zip(after, before).map { $0 - $1 } == [1, 1, 1, 0, 0, 0, 0])
            let events = try await store.pool.query("SELECT activity_id, kind FROM outbox").map { try $0.decode((UUID, String).self) }
            #expect(events.count == 1 && events.first?.0 == assigned.id && events.first?.1 == "activity.assigned")
        }
    }

    /// The check itself, against a transaction still in progress on another connection: it
    /// waits for that transaction, then says whether its event is there. The check leaves
    /// nothing behind.
    @Test(arguments: [true, false])
    func theCheckWaitsForTheTransactionAndTellsWhetherItCommitted(commits: Bool) async throws {
        try await TestDatabase.withStore { store, configuration in
            let fixture = try await WorkflowFixture.make(store)
            let tenantID = fixture.tenant.id
            let event = UUID.v7()
            let writer = try await PostgresConnection.connect(configuration, logger: testLogger)
            try await writer.executeScript("BEGIN")
            try await writer.query(
                """
                INSERT INTO outbox (tenant_id, id, kind, actor_id, recipient_ids, payload, occurred_at)
                VALUES (\(tenantID), \(event), 'activity.assigned', \(event), '{}', '{}', now())
                """)
            let ledger = OutboxLedger()
            ledger.record(event)
            let check = Task {
                try await store.pool.withConnection { try await Store.committed(ledger, tenant: tenantID, on: $0) }
            }
            // The check waits on the writer's transaction (a lock wait), however long it takes.
            // (The limit only keeps a broken build from hanging.)
            var waiting = false
            let deadline = ContinuousClock.now + .seconds(300)
            while !waiting, ContinuousClock.now < deadline {
                // (Not on the writer: in a transaction, pg_stat_activity is read once.)
                waiting = try await store.pool.query(
                    """
                    SELECT EXISTS (SELECT FROM pg_stat_activity
                                   WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%herald.commit_check%')
                    """
                ).single().decode(Bool.self, at: 0)
                if !waiting { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(waiting)
            try await writer.executeScript(commits ? "COMMIT" : "ROLLBACK")
            await writer.close()
            #expect(try await check.value == commits)
            let rows = try await store.pool.query("SELECT kind FROM outbox WHERE id = \(event)").map { try $0.decode(String.self, at: 0) }
            #expect(rows == (commits ? ["activity.assigned"] : []))
        }
    }

    /// A transaction that wrote no outbox event cannot be told: the error says so.
    @Test func aTransactionWithoutAnEventCannotBeTold() async throws {
        try await TestDatabase.withStore { store, _ in
            let fixture = try await WorkflowFixture.make(store)
            let error = await #expect(throws: PostgresError.self) {
                try await store.pool.withConnection { try await Store.committed(OutboxLedger(), tenant: fixture.tenant.id, on: $0) }
            }
            #expect(error?.kind == .commitUnknown)
        }
    }
}
