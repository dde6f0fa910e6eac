import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// (docs/operating/failover.md) A batch of outcomes whose statement lost its connection is written again
/// as it was (the worker cannot know whether the first write committed). The second write
/// records no attempt twice and still counts what the first one counted.
@Suite struct AcknowledgementReplayTests {
    @Test func aBatchWrittenTwiceIsRecordedOnceAndCountedBothTimes() async throws {
        try await DispatchHarness.with { harness in
            try await harness.registerMany("chidi@acme.test", count: 3, prefix: "phone-")
            _ = try await harness.assign()
            try await harness.withDispatcher(.init(worker: "replayer", lease: .seconds(60))) { dispatcher in
                #expect(try await dispatcher.fanOutOnce() == (1, 3))
                let claimed = try await dispatcher.queue.claimDeliveries(limit: 10)
                #expect(claimed.count == 3)
                let started = Date()
                let batch = claimed.map {
                    Acknowledgement(
                        tenantID: $0.tenantID, deliveryID: $0.id, notificationID: $0.notificationID, deviceID: $0.deviceID, provider: $0.provider,
                        attempt: $0.attempt, leaseID: $0.leaseID, status: .sent,
                        outcome: .delivered, nextAttemptAt: nil, httpStatus: 200, messageID: "m-\($0.id)", error: nil, startedAt: started,
                        finishedAt: started.addingTimeInterval(0.01), attemptID: $0.id.v7Sibling())
                }
                let ids = Set(claimed.map(\.id))
                #expect(try await dispatcher.queue.acknowledge(batch) == ids)
                // Sent again after its answer was lost: the same three count, nothing is added.
                #expect(try await dispatcher.queue.acknowledge(batch, again: true) == ids)
                #expect(try await harness.count("SELECT count(*) FROM delivery_attempt_history") == 3)
                #expect(try await harness.count("SELECT count(*) FROM delivery_attempt_history WHERE counted AND worker = 'replayer'") == 3)
                // First attempts that sent their deliveries are kept on the deliveries, not as rows.
                #expect(try await harness.count("SELECT count(*) FROM delivery_attempts") == 0)
                #expect(
                    try await harness.count(
                        "SELECT count(*) FROM deliveries WHERE sent_by = 'replayer' AND sent_attempt_id IS NOT NULL AND sent_attempt_started_at IS NOT NULL"
                    ) == 3)
                // Without `again` a repeat is late (the lease was given up by the first write).
                #expect(try await dispatcher.queue.acknowledge(batch).isEmpty)
            }
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'sent'") == 3)
        }
    }
}
