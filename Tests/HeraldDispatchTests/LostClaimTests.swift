import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// A claim the database committed but whose answer the worker never got (its connection
/// lost at that moment, as in a failover) leaves deliveries leased to a worker that does not
/// have them in hand. Renewing every lease it owned kept them leased and unsent for as long
/// as the worker ran (the failover demo hung with 131 of them); it renews only what it holds,
/// so their leases run out and they are queued and sent again.
@Suite struct LostClaimTests {
    @Test func deliveriesOfAClaimWhoseAnswerWasLostAreSentOnceTheirLeaseRunsOut() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone-0001", app: .member)
            try await harness.register("chidi@acme.test", token: "chidi-phone-0002", app: .member)
            _ = try await harness.assign()
            try await harness.withDispatcher(.init(worker: "forgetful", lease: .seconds(2))) { dispatcher in
                #expect(try await dispatcher.fanOutOnce() == (1, 2))
                // The claim commits in the database; its answer never reaches the worker.
                #expect(try await dispatcher.queue.claimDeliveries(limit: 1).count == 1)
                let worker = Task { try await dispatcher.run(.forever) }
                #expect(await waitFor(seconds: 300) { await harness.emulator.messages().count == 2 })
                dispatcher.shutdown()
                try await worker.value
            }
            let tokens = await harness.emulator.messages().map(\.token)
            #expect(tokens.sorted() == ["chidi-phone-0001", "chidi-phone-0002"])
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'sent'") == 2)
        }
    }
}
