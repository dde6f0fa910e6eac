import Foundation
import HeraldCore
import HeraldRuntime
import HeraldTestSupport
import HeraldTesting
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// Tables that changed more than they held when last analyzed are analyzed by the workers, not
/// a minute later by autovacuum (docs/operating/database.md, "Statistics of young tables"):
/// plans the dispatcher keeps are made again from statistics that know the rows.
@Suite struct YoungTableStatisticsTests {
    /// Autovacuum is off for the devices here, so that only the worker can analyze them.
    static func devicesLeftToTheWorkers(_ harness: DispatchHarness) async throws {
        try await harness.store.pool.query("ALTER TABLE devices SET (autovacuum_enabled = false)")
    }

    static func devicesAnalyzed(_ harness: DispatchHarness) async throws -> Int {
        try await harness.count("SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'devices'")
    }

    /// The changes to the devices the server's statistics have counted so far (each session
    /// reports its own when it goes idle, within seconds).
    static func devicesChanged(_ harness: DispatchHarness) async throws -> Int {
        try await harness.count("SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = 'devices'")
    }

    /// Adds `count` devices, waits until the server has counted `changes` since their last
    /// analysis, and tells whether `dispatcher`'s call analyzed the devices.
    static func analyzedAfterAdding(
        _ count: Int, prefix: String, changes: Int, _ harness: DispatchHarness, _ dispatcher: Dispatcher
    ) async throws -> Bool {
        try await harness.registerMany("chidi@acme.test", count: count, prefix: prefix)
        #expect(await eventually { (try? await devicesChanged(harness)).map { $0 >= changes } ?? false })
        return try await dispatcher.queue.analyzeYoungTables().contains("devices")
    }

    @Test func aRunningWorkerAnalyzesATableThatChangedMoreThanItHeld() async throws {
        try await DispatchHarness.with { harness in
            try await Self.devicesLeftToTheWorkers(harness)
            #expect(try await Self.devicesAnalyzed(harness) == 0)
            try await harness.registerMany("chidi@acme.test", count: 1_500, prefix: "phone-")
            try await harness.withDispatcher { dispatcher in
                let run = Task { try await dispatcher.run() }
                #expect(await eventually { (try? await Self.devicesAnalyzed(harness)).map { $0 == 1 } ?? false })
                run.cancel()
                #expect(await finishes(run, within: .seconds(30)))
            }
            // The planner now knows the rows.
            #expect(try await harness.count("SELECT reltuples::int FROM pg_class WHERE relname = 'devices'") >= 1_500)
        }
    }

    @Test func aTableIsAnalyzedOnlyOnceItChangedMoreThanItHeldAndAThousandTimes() async throws {
        try await DispatchHarness.with { harness in
            try await Self.devicesLeftToTheWorkers(harness)
            // (Every `try` of the body is inside `#expect`: the closure says it throws.)
            try await harness.withDispatcher { dispatcher throws in
                // Young: fewer than a thousand changes are left alone, however new the table.
                #expect(try await Self.analyzedAfterAdding(900, prefix: "a-", changes: 900, harness, dispatcher) == false)
                #expect(try await Self.analyzedAfterAdding(600, prefix: "b-", changes: 1_500, harness, dispatcher))
                #expect(try await Self.devicesAnalyzed(harness) == 1)
                // Analyzed with 1,500 rows: 1,200 more changes are autovacuum's to see to.
                #expect(try await Self.analyzedAfterAdding(1_200, prefix: "c-", changes: 1_200, harness, dispatcher) == false)
                // More changes than the rows it held: analyzed again.
                #expect(try await Self.analyzedAfterAdding(400, prefix: "d-", changes: 1_600, harness, dispatcher))
                #expect(try await Self.devicesAnalyzed(harness) == 2)
            }
        }
    }

    /// The webhooks' sender does it too, where no dispatcher runs (`herald bench webhooks`,
    /// whose claims ran on plans made for an empty queue on a new database).
    @Test func aRunningWebhookSenderAnalyzesThemToo() async throws {
        try await DispatchHarness.with { harness in
            try await Self.devicesLeftToTheWorkers(harness)
            try await harness.registerMany("chidi@acme.test", count: 1_500, prefix: "phone-")
            try await HeraldEnvironment([:], logger: testLogger).withWebhookSender(
                store: harness.store, worker: "young-tables", retention: .seconds(86_400)
            ) { sender in
                let run = Task { await sender.run() }
                #expect(await eventually { (try? await Self.devicesAnalyzed(harness)).map { $0 == 1 } ?? false })
                sender.shutdown()
                #expect(await finishes(run, within: .seconds(30)))
            }
        }
    }
}
