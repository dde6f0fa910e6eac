import HeraldCore
import HeraldHTTP
import HeraldTestSupport
import HeraldTesting
import Logging
import Testing

@testable import HeraldDispatch
@testable import HeraldWebhooks

/// A worker's loops (the dispatcher's fan-out, claims, outcomes, upkeep, timers, history; the
/// webhooks' feeder, claims and upkeep) end when their task is cancelled, and a database that
/// goes away is a few log lines, not one a turn.
@Suite struct WorkerLoopTests {
    @Test func cancelledTheDispatcherReturns() async throws {
        try await DispatchHarness.with { harness in
            try await harness.withDispatcher(listen: true) { dispatcher in
                let run = Task { try await dispatcher.run() }
                #expect(await eventually { !dispatcher.isStopping })
                try await Task.sleep(for: .milliseconds(300))
                run.cancel()
                #expect(await finishes(run, within: .seconds(30)))
            }
        }
    }

    @Test func theDispatcherLogsADatabaseAwayOnceALoop() async throws {
        try await DispatchHarness.with { harness in
            let log = CapturedLog()
            try await Dispatcher.with(
                store: harness.store, listen: true, gateway: harness.gateway, configuration: .init(pollInterval: .milliseconds(100)),
                logger: log.logger
            ) { dispatcher in
                let run = Task { try await dispatcher.run() }
                #expect(await eventually { !dispatcher.isStopping })
                try await TestDatabase.refuseConnections(to: harness.configuration)
                #expect(
                    await eventually {
                        dispatcher.failures.fanOut.failures >= 6 && dispatcher.failures.timers.failures >= 6
                            && dispatcher.failures.upkeep.failures >= 6
                    })
                let failing = log.lines.filter { $0.message.hasSuffix("failed; retrying") || $0.message.hasSuffix("still failing") }
                #expect(log.lines(containing: "fan-out").count == 1, "\(log.lines)")
                #expect(log.lines(containing: "firing due timers").count == 1, "\(log.lines)")
                #expect(failing.count <= dispatcher.failures.all.count + 1, "\(failing)")

                try await TestDatabase.allowConnections(to: harness.configuration)
                #expect(await eventually { dispatcher.failures.fanOut.failures == 0 })
                #expect(log.lines(containing: "fan-out works again").count == 1, "\(log.lines)")
                run.cancel()
                #expect(await finishes(run, within: .seconds(30)))
            }
        }
    }

    func withSender(_ harness: DispatchHarness, logger: Logger, _ body: (WebhookSender) async throws -> Void) async throws {
        let http = try HTTPClient(configuration: .init(maxInFlight: 4, http1Only: true, engine: .libcurl), logger: testLogger)
        defer { http.shutdown() }
        let sender = WebhookSender(
            store: harness.store, client: http, configuration: .init(policy: DestinationPolicy(.webhooks)), worker: "loop-test", logger: logger)
        try await body(sender)
    }

    @Test func cancelledTheWebhookSenderReturns() async throws {
        try await DispatchHarness.with { harness in
            try await withSender(harness, logger: testLogger) { sender in
                let run = Task { await sender.run() }
                try await Task.sleep(for: .milliseconds(1_100))
                run.cancel()
                #expect(await finishes(run, within: .seconds(30)))
            }
        }
    }

    @Test func theWebhookSenderLogsADatabaseAwayOnceALoop() async throws {
        try await DispatchHarness.with { harness in
            let log = CapturedLog()
            try await withSender(harness, logger: log.logger) { sender in
                let run = Task { await sender.run() }
                try await TestDatabase.refuseConnections(to: harness.configuration)
                // The ticker wakes the feeder every second; each failure waits longer.
                #expect(await eventually { sender.failures.feed.failures >= 6 && sender.failures.upkeep.failures >= 6 })
                #expect(log.lines(containing: "webhook feeder").count == 1, "\(log.lines)")
                #expect(log.lines(containing: "webhook upkeep").count == 1, "\(log.lines)")
                #expect(log.lines.count <= sender.failures.all.count + 2, "\(log.lines)")

                try await TestDatabase.allowConnections(to: harness.configuration)
                #expect(await eventually { sender.failures.feed.failures == 0 })
                #expect(log.lines(containing: "webhook feeder works again").count == 1, "\(log.lines)")
                run.cancel()
                #expect(await finishes(run, within: .seconds(30)))
            }
        }
    }
}
