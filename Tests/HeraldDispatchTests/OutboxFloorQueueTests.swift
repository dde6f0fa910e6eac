import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTestSupport
import HeraldTesting
import Testing

@testable import HeraldStore

/// The outbox's floor on a real database: it rises past events already fanned out (so a
/// claim no longer walks them), and never past an event whose transaction took its `seq`
/// before later events committed and is still open.
@Suite struct QueueFloorQueueTests {
    func fanOutEverything(_ harness: DispatchHarness) async throws {
        _ = try await harness.count(
            "WITH done AS (UPDATE outbox SET fanned_out_at = now() WHERE fanned_out_at IS NULL RETURNING 1) SELECT count(*) FROM done")
    }

    /// Refreshes until the floor is `expected`. A transaction in progress anywhere on the test
    /// server when a refresh noted its snapshot (every test's database shares the server's
    /// transaction ids) holds it back until it ends: on a loaded machine running the whole suite,
    /// longer than the 30 s this once allowed. The limit only keeps a broken build from hanging.
    func refresh(_ queue: DeliveryQueue, until expected: Int64) async throws {
        let risen = try await eventually {
            try await queue.refreshWindow()
            return queue.outboxFloor.value == expected
        }
        #expect(risen, "the floor stayed at \(queue.outboxFloor.value), not \(expected)")
    }

    @Test func theFloorRisesPastFannedOutEventsButNotPastOneStillToCommit() async throws {
        try await DispatchHarness.with { harness in
            let first = try await harness.assign(name: "first")
            try await fanOutEverything(harness)
            try await harness.store.withDispatcherPool(size: 2) { dispatcherStore in
                let queue = DeliveryQueue(store: dispatcherStore, worker: "floor-test", lease: .seconds(10), tenants: [])
                let firstSeq = try await harness.count("SELECT max(seq)::int FROM outbox")
                // The floor rises past the events fanned out.
                try await refresh(queue, until: Int64(firstSeq) + 1)
                let late = PostgresPool(configuration: harness.configuration, size: 1, logger: testLogger)
                try await late.closing { late in
                    try await late.withConnection { open in
                        // A transaction that takes its seq now and commits last: a copy of
                        // the first activity's event, under a new id.
                        try await open.query("BEGIN")
                        let copy = UUID()
                        let copySeq = try await open.query(
                            """
                            INSERT INTO outbox (tenant_id, id, kind, activity_id, actor_id, recipient_ids, payload, occurred_at)
                            SELECT tenant_id, \(copy), kind, activity_id, actor_id, recipient_ids, payload, occurred_at
                            FROM outbox WHERE activity_id = \(first.id)
                            RETURNING seq
                            """
                        ).single().decode(Int64.self, at: 0)
                        for n in 0..<3 { _ = try await harness.assign(name: "later \(n)") }
                        try await fanOutEverything(harness)
                        let highest = try await harness.count("SELECT max(seq)::int FROM outbox")
                        #expect(Int64(highest) > copySeq)
                        for _ in 0..<20 {
                            try await queue.refreshWindow()
                            #expect(queue.outboxFloor.value <= copySeq, "the floor passed an event still to commit")
                            try await Task.sleep(for: .milliseconds(20))
                        }
                        try await open.query("COMMIT")
                        try await queue.refreshWindow()
                        let claimed = try await dispatcherStore.pool.withTransaction { connection in
                            try await queue.claimEvents(limit: 10, part: 100, on: connection)
                        }
                        #expect(claimed.map(\.id) == [copy])
                        // Once it is fanned out too, the floor rises past everything.
                        try await fanOutEverything(harness)
                        try await refresh(queue, until: Int64(highest) + 1)
                    }
                }
            }
        }
    }
}
