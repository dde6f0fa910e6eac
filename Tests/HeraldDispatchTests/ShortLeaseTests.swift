import Foundation
import HeraldCore
import HeraldTestSupport
import HeraldTesting
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// A lease runs from when the database read its clock: a fan-out transaction's from when it
/// began. One that took most of its lease (held up here by a lock on the deliveries; on a loaded
/// machine, by the machine) handed over deliveries whose lease could run out in the middle of
/// their send, and a delivery reclaimed then was claimed and sent a second time.
@Suite struct ShortLeaseTests {
    @Test func aDeliveryHandedOverWithTooLittleOfItsLeaseLeftIsGivenBackAndSentOnce() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone-0001", app: .member)
            _ = try await harness.assign()
            // A lease of 3 s: a send may begin while 1 s of it is left.
            try await harness.withDispatcher(.init(worker: "held-up", lease: .seconds(3))) { dispatcher in
                let worker = try await harness.store.pool.withTransaction { connection in
                    // The fan-out transaction's writing of the delivery waits for this lock,
                    // its lease running from before the wait.
                    try await connection.query("LOCK TABLE deliveries IN SHARE MODE")
                    let worker = Task { try await dispatcher.run(.forever) }
                    // (The claims and upkeep wait too, each a statement on its own; the fan-out
                    // waits in a transaction that ran statements before.)
                    let fanOutWaits = """
                        SELECT count(*) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
                        WHERE NOT l.granted AND a.xact_start < a.query_start
                        """
                    #expect(await eventually { (try? await harness.count(fanOutWaits)) ?? 0 > 0 })
                    // Held for 2.5 s or more (more on a loaded machine: then the lease has run
                    // out, and the delivery is given back all the same).
                    try await Task.sleep(for: .milliseconds(2_500))
                    return worker
                }
                #expect(await eventually { dispatcher.counters.sent == 1 })
                dispatcher.shutdown()
                try await worker.value
                // At least once: a claim that waited for the lock too, and leased the delivery
                // when it was let go, holds a lease as short and gives it back as well.
                #expect(dispatcher.counters.leasesRanShort >= 1 && dispatcher.counters.sent == 1, "\(dispatcher.counters)")
            }
            #expect(await harness.emulator.messages().count == 1)
            // Given back unspent: one attempt, the one that sent it.
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'sent' AND attempts = 1") == 1)
            #expect(try await harness.count("SELECT count(*) FROM delivery_attempt_history") == 1)
        }
    }

    /// A worker's upkeep leaves the expired leases it has in hand alone (it renews them);
    /// another worker's takes them back.
    @Test func upkeepDoesNotReclaimTheLeasesItsWorkerHasInHand() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone-0001", app: .member)
            _ = try await harness.assign()
            _ = try await harness.withDispatcher { try await $0.fanOutOnce() }
            try await harness.withDispatcher(.init(worker: "stalled", lease: .seconds(60))) { stalled in
                let held = try await stalled.queue.claimDeliveries(limit: 10)
                #expect(held.count == 1)
                let expire = "UPDATE delivery_leases SET expires_at = now() - interval '1 second'"
                try await harness.store.pool.query("\(unsafeRaw: expire)")
                #expect(try await stalled.queue.reclaimExpiredLeases(except: held.map(\.id)) == 0)
                // Renewed, it is this worker's again for a lease.
                #expect(try await stalled.queue.renewLeases(held.map(\.id)) == held.map(\.id))
                #expect(try await harness.count("SELECT count(*) FROM delivery_leases WHERE expires_at > now() + interval '30 seconds'") == 1)
                try await harness.store.pool.query("\(unsafeRaw: expire)")
                let reclaimed = try await harness.withDispatcher(.init(worker: "other")) { other in
                    try await other.queue.reclaimExpiredLeases(except: held.map(\.id))
                }
                #expect(reclaimed == 1)
            }
        }
    }
}
