import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// A claim leases its batch in one row a tenant (`delivery_leases`) and writes no delivery
/// (docs/operating/scaling.md#a-delivery-written-twice): what that must still get right.
@Suite struct BatchLeaseTests {
    /// Claims of one tenant take turns: claimers racing over the same queue, four at a time on
    /// two workers, never take one delivery twice, and between them take all of it.
    @Test func racingClaimersNeverTakeADeliveryTwice() async throws {
        try await DispatchHarness.with { harness in
            try await harness.registerMany("chidi@acme.test", count: 1_500, prefix: "phone-")
            _ = try await harness.assign()
            _ = try await harness.withDispatcher { try await $0.fanOutOnce() }
            try await harness.withDispatcher(.init(worker: "left", lease: .seconds(60))) { left in
                try await harness.withDispatcher(.init(worker: "right", lease: .seconds(60))) { right in
                    var taken: [UUID] = []
                    while true {
                        let round = try await withThrowingTaskGroup(of: [UUID].self) { group in
                            for queue in [left.queue, right.queue, left.queue, right.queue] {
                                group.addTask { try await queue.claimDeliveries(limit: 50).map(\.id) }
                            }
                            return try await group.reduce(into: [UUID]()) { $0 += $1 }
                        }
                        if round.isEmpty { break }
                        taken += round
                    }
                    #expect(taken.count == 1_500 && Set(taken).count == 1_500, "\(taken.count) taken, \(Set(taken).count) different")
                }
            }
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'queued' AND attempts = 0") == 1_500)
        }
    }

    /// A tenant whose turn another claim holds (here, a transaction that took it and went
    /// quiet, as a claimer stopped mid-claim would) is passed over, not waited for; its work
    /// is claimed once the turn is free.
    @Test func aTenantWhoseTurnIsHeldIsPassedOverNotWaitedFor() async throws {
        try await DispatchHarness.with { harness in
            try await harness.registerMany("chidi@acme.test", count: 3, prefix: "phone-")
            _ = try await harness.assign()
            _ = try await harness.withDispatcher { try await $0.fanOutOnce() }
            try await harness.withDispatcher(.init(worker: "patient", lease: .seconds(60))) { dispatcher in
                try await harness.store.pool.withTransaction(
                    // Should the claim wait after all, the turn is given up after a while and
                    // the expectation below fails instead of the test hanging.
                    setup: "SET LOCAL idle_in_transaction_session_timeout = '20s'"
                ) { connection in
                    try await connection.query(
                        "SELECT pg_advisory_xact_lock(\(DeliveryQueue.claimLockClass)::int, hashtext(\(harness.tenant.id)::text))")
                    #expect(try await dispatcher.queue.claimDeliveries(limit: 10).isEmpty)
                }
                #expect(try await dispatcher.queue.claimDeliveries(limit: 10).count == 3)
            }
        }
    }

    /// A lease that ran out (its worker died mid-send) is taken back, and each delivery of it
    /// still as it was claimed counts the attempt its worker was making: claimed again, it is
    /// the second attempt. One the worker settled before it died is left as it is.
    @Test func aLeaseThatRanOutCountsTheAttemptItsWorkerWasMaking() async throws {
        try await DispatchHarness.with { harness in
            try await harness.registerMany("chidi@acme.test", count: 3, prefix: "phone-")
            _ = try await harness.assign()
            _ = try await harness.withDispatcher { try await $0.fanOutOnce() }
            try await harness.withDispatcher(.init(worker: "doomed", lease: .seconds(60))) { doomed in
                let claimed = try await doomed.queue.claimDeliveries(limit: 10)
                #expect(claimed.count == 3 && Set(claimed.map(\.leaseID)).count == 1)
                #expect(try await doomed.queue.acknowledge([DispatcherTests.sent(claimed[0])]) == [claimed[0].id])
                try await harness.store.pool.query("UPDATE delivery_leases SET expires_at = now() - interval '1 second'")
                try await harness.withDispatcher(.init(worker: "survivor", lease: .seconds(60))) { survivor in
                    #expect(try await survivor.queue.reclaimExpiredLeases() == 2)
                    #expect(try await harness.count("SELECT count(*) FROM delivery_leases") == 0)
                    #expect(
                        try await harness.count(
                            "SELECT count(*) FROM deliveries WHERE status = 'queued' AND attempts = 1 AND first_attempt_at IS NOT NULL")
                            == 2)
                    #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'sent' AND attempts = 1") == 1)
                    let again = try await survivor.queue.claimDeliveries(limit: 10)
                    #expect(Set(again.map(\.id)) == Set(claimed.dropFirst().map(\.id)) && again.allSatisfy { $0.attempt == 2 })
                    // The dead worker's answer, should it come, does not count.
                    #expect(try await doomed.queue.acknowledge(claimed.dropFirst().map(DispatcherTests.sent)).isEmpty)
                    #expect(try await survivor.queue.acknowledge(again.map(DispatcherTests.sent)) == Set(again.map(\.id)))
                }
            }
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'sent'") == 3)
            #expect(try await harness.count("SELECT count(*) FROM delivery_attempt_history WHERE worker = 'doomed' AND NOT counted") == 2)
        }
    }

    /// A batch's last outcome removes its lease, and a drain leaves none: every delivery sent
    /// at its first attempt, written twice (created, then settled).
    @Test func aDrainLeavesNoLeaseBehind() async throws {
        try await DispatchHarness.with { harness in
            try await harness.registerMany("chidi@acme.test", count: 40, prefix: "phone-")
            for _ in 0..<5 { _ = try await harness.assign() }
            let counters = try await harness.drain()
            #expect(counters.sent == 200)
            #expect(try await harness.count("SELECT count(*) FROM delivery_leases") == 0)
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'sent' AND attempts = 1") == 200)
        }
    }

    /// Moving an activity on cancels its pushes no worker has taken; one a worker is sending
    /// is left to its outcome (and history says it was sent).
    @Test func supersedeLeavesAPushBeingSentToItsOutcome() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone", app: .member)
            let activity = try await harness.assign()
            _ = try await harness.withDispatcher { try await $0.fanOutOnce() }
            try await harness.withDispatcher(.init(worker: "sender", lease: .seconds(60))) { sender in
                let claimed = try await sender.queue.claimDeliveries(limit: 10)
                #expect(claimed.count == 1)
                try await harness.act(.start, activity.id, by: "chidi@acme.test")
                #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'cancelled'") == 0)
                #expect(try await sender.queue.acknowledge(claimed.map(DispatcherTests.sent)) == Set(claimed.map(\.id)))
            }
            #expect(try await harness.history().first { $0.event == "activity.assigned" }?.status == "sent")
        }
    }
}
