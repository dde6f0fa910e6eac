import Foundation
import HeraldPostgres
import HeraldTestSupport
import HeraldTesting
import Testing

@Suite struct ListenerTests {
    /// Waits for the next event matching `predicate`, up to `timeout`.
    func next(
        _ iterator: inout AsyncStream<PostgresListener.Event>.Iterator, timeout: Duration = .seconds(20),
        where predicate: (PostgresListener.Event) -> Bool
    ) async -> PostgresListener.Event? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let event = await iterator.next() else { return nil }
            if predicate(event) { return event }
        }
        return nil
    }

    @Test func notificationsArriveAndKeepArrivingAfterTheConnectionIsKilled() async throws {
        try await TestDatabase.with { pool, configuration in
            let listener = PostgresListener(
                configuration: configuration, channels: ["herald_outbox"], logger: testLogger)
            defer { listener.stop() }
            var events = listener.events.makeAsyncIterator()

            #expect(await next(&events) { $0 == .connected(reconnected: false) } != nil)
            try await pool.query("SELECT pg_notify('herald_outbox', \("first"))")
            let first = await next(&events) { if case .notification = $0 { true } else { false } }
            #expect(first == .notification(channel: "herald_outbox", payload: "first"))

            let killed = try await pool.query(
                """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()
                """)
            #expect(killed.count == 1)

            #expect(await next(&events) { if case .disconnected = $0 { true } else { false } } != nil)
            #expect(await next(&events) { $0 == .connected(reconnected: true) } != nil)
            try await pool.query("SELECT pg_notify('herald_outbox', \("second"))")
            let second = await next(&events) { if case .notification = $0 { true } else { false } }
            #expect(second == .notification(channel: "herald_outbox", payload: "second"))
        }
    }

    @Test func stopFinishesTheStream() async throws {
        try await TestDatabase.with { _, configuration in
            let listener = PostgresListener(configuration: configuration, channels: ["a"], logger: testLogger)
            var events = listener.events.makeAsyncIterator()
            #expect(await events.next() == .connected(reconnected: false))
            listener.stop()
            #expect(await events.next() == nil)
        }
    }

    /// A database that refuses connections: one `.disconnected`, a line when it starts and one
    /// when it is over, and attempts that wait longer each time (not one every 250 ms for ever).
    @Test func aDatabaseThatStaysAwayIsOneLineAndOneEvent() async throws {
        try await TestDatabase.with { _, configuration in
            let log = CapturedLog()
            let listener = PostgresListener(configuration: configuration, channels: ["a"], logger: log.logger)
            defer { listener.stop() }
            var events = listener.events.makeAsyncIterator()
            #expect(await events.next() == .connected(reconnected: false))
            try await TestDatabase.refuseConnections(to: configuration)
            #expect(await eventually { listener.failuresInARow >= 6 })
            try await TestDatabase.allowConnections(to: configuration)
            let seen = await next(&events) { $0 == .connected(reconnected: true) }
            #expect(seen != nil)
            #expect(
                log.lines.map(\.message) == [
                    "listener connection lost", "listening for notifications failed; retrying", "listening for notifications works again"
                ])
        }
    }

    func listening(_ pool: PostgresPool) async throws -> Int {
        try await pool.query("SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'")
            .single().decode(Int.self, at: 0)
    }

    /// Nobody reads the events any more (the consuming task was cancelled): the thread stops
    /// and its connection closes, with no `stop()`.
    @Test func aListenerNobodyReadsStops() async throws {
        try await TestDatabase.with { pool, configuration in
            let listener = PostgresListener(configuration: configuration, channels: ["gone"], logger: testLogger)
            let reader = Task {
                for await _ in listener.events {}
            }
            let opened = try await eventually { try await listening(pool) == 1 }
            #expect(opened)
            reader.cancel()
            let closed = try await eventually { try await listening(pool) == 0 }
            #expect(closed)
        }
    }

    /// Several subscriptions, one LISTEN connection: each hears its own channels, and a channel
    /// nobody wants any more is let go (UNLISTEN) without closing the connection.
    @Test func subscriptionsShareOneConnection() async throws {
        try await TestDatabase.with { pool, configuration in
            let notifier = PostgresNotifier(configuration: configuration, logger: testLogger)
            let outbox = notifier.listen(to: ["herald_outbox"])
            let live = notifier.listen(to: ["herald_live_feed", "herald_outbox"])
            var outboxEvents = outbox.events.makeAsyncIterator()
            var liveEvents = live.events.makeAsyncIterator()
            #expect(await next(&outboxEvents) { $0 == .connected(reconnected: false) } != nil)
            #expect(await next(&liveEvents) { $0 == .connected(reconnected: false) } != nil)
            let connections = try await listening(pool)
            #expect(connections == 1)
            try await pool.query("SELECT pg_notify('herald_live_feed', 'feed'), pg_notify('herald_outbox', 'event')")
            #expect(
                await next(&outboxEvents) { if case .notification = $0 { true } else { false } }
                    == .notification(channel: "herald_outbox", payload: "event"))
            #expect(
                await next(&liveEvents) { if case .notification = $0 { true } else { false } }
                    == .notification(channel: "herald_live_feed", payload: "feed"))
            #expect(
                await next(&liveEvents) { if case .notification = $0 { true } else { false } }
                    == .notification(channel: "herald_outbox", payload: "event"))
            outbox.stop()
            #expect(await outboxEvents.next() == nil)
            try await pool.query("SELECT pg_notify('herald_outbox', 'again')")
            #expect(
                await next(&liveEvents) { if case .notification = $0 { true } else { false } }
                    == .notification(channel: "herald_outbox", payload: "again"))
            live.stop()
            let closed = try await eventually { try await listening(pool) == 0 }
            #expect(closed)
        }
    }
}
