import HeraldTestSupport
import HeraldTesting
import Testing

@testable import HeraldLive
@testable import HeraldStore

/// The live channel's loops (the sequencer, rounds, presence, upkeep, credentials, typing)
/// end when their task is cancelled, and a database that goes away is a few log lines, not
/// one a turn.
@Suite struct LiveHubLoopTests {
    func servers(_ store: Store) async throws -> Int {
        try await store.pool.query("SELECT count(*)::int FROM live_servers").single().decode(Int.self, at: 0)
    }

    /// It once spun at 100 % CPU when `herald serve` could not listen: the cancellation made
    /// every sleep return at once, and the upkeep loop went round again.
    @Test func cancelledTheHubReturns() async throws {
        try await TestDatabase.withStore { store, _ in
            let hub = LiveHub(store: store, logger: testLogger)
            let run = Task { try await hub.run() }
            #expect(try await eventually { try await servers(store) == 1 })
            // At least one turn of the ticker, so that its loop is under way.
            try await Task.sleep(for: .milliseconds(1_100))
            run.cancel()
            #expect(await finishes(run, within: .seconds(30)))
        }
    }

    /// `herald serve`, with no worker beside it, keeps the statistics of tables that outgrew
    /// them (docs/operating/database.md, "Statistics of young tables"): its connections' plans
    /// are made again when a team and its group grew from four people to thousands.
    @Test func theHubAnalyzesTablesThatChangedMoreThanTheyHeld() async throws {
        try await TestDatabase.withStore { store, _ in
            try await store.pool.query("ALTER TABLE people SET (autovacuum_enabled = false)")
            let tenant = try await store.createTenant(slug: "young", name: "Young")
            _ = try await store.withTenant(tenant) { session in
                try await session.connection.query(
                    """
                    INSERT INTO people (tenant_id, id, email, display_name)
                    SELECT \(session.tenantID), gen_random_uuid(), 'p' || g || '@young.test', 'P' || g FROM generate_series(1, 1500) g
                    """)
            }
            func analyzed() async throws -> Int {
                try await store.pool.query("SELECT analyze_count::int FROM pg_stat_user_tables WHERE relname = 'people'").single().decode(
                    Int.self, at: 0)
            }
            #expect(try await analyzed() == 0)
            let hub = LiveHub(store: store, logger: testLogger)
            let run = Task { try await hub.run() }
            #expect(await eventually { (try? await analyzed()) == 1 })
            run.cancel()
            #expect(await finishes(run, within: .seconds(30)))
        }
    }

    @Test func aDatabaseThatGoesAwayIsFewLinesThenOneWhenItIsBack() async throws {
        try await TestDatabase.withStore { store, configuration in
            let log = CapturedLog()
            let hub = LiveHub(store: store, logger: log.logger)
            let run = Task { try await hub.run() }
            #expect(try await eventually { try await servers(store) == 1 })
            try await TestDatabase.refuseConnections(to: configuration)
            // The sequencer is woken every second: it fails over and over, each time after a
            // longer pause; the upkeep (every 5 s) fails too.
            #expect(await eventually { hub.failures.sequencer.failures >= 6 && hub.failures.upkeep.failures >= 1 })
            let failing = log.lines.filter { $0.message.hasSuffix("failed; retrying") || $0.message.hasSuffix("still failing") }
            #expect(log.lines(containing: "live sequencer").count == 1, "\(log.lines)")
            #expect(log.lines(containing: "live upkeep").count == 1, "\(log.lines)")
            // One line a loop at most (and the listener's lost connection), whatever the turns.
            #expect(failing.count <= hub.failures.all.count + 1, "\(failing)")
            #expect(log.lines.count <= hub.failures.all.count + 3, "\(log.lines)")

            try await TestDatabase.allowConnections(to: configuration)
            #expect(await eventually { hub.failures.sequencer.failures == 0 })
            #expect(log.lines(containing: "live sequencer works again").count == 1, "\(log.lines)")
            run.cancel()
            #expect(await finishes(run, within: .seconds(30)))
        }
    }
}
