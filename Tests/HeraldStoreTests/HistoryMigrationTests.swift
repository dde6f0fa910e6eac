import Foundation
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTestSupport
import Testing

/// `0018_history_partitions.sql` on a database the previous schema filled: every
/// notification, delivery and attempt moves into the week partitions, still linked to each
/// other, each in the week of its event.
@Suite struct HistoryMigrationTests {
    /// Everything about the history that must survive the move, without the ids it rewrites.
    static let fingerprint: PostgresQuery = """
        SELECT n.event_id::text || ' ' || n.recipient_id || ' ' || n.status || ' ' || n.title || ' ' || coalesce(n.decision, '-')
               || ' | ' || coalesce(d.device_id::text, '-') || ' ' || coalesce(d.status, '-') || ' ' || coalesce(d.attempts, 0)
               || ' | ' || coalesce(a.attempt, 0) || ' ' || coalesce(a.outcome, '-') || ' ' || coalesce(a.http_status, 0)
        FROM notifications n
        LEFT JOIN deliveries d ON d.tenant_id = n.tenant_id AND d.notification_id = n.id
        LEFT JOIN delivery_attempts a ON a.tenant_id = d.tenant_id AND a.delivery_id = d.id
        ORDER BY 1
        """

    @Test func theMigrationMovesEveryRowIntoItsWeek() async throws {
        try await TestDatabase.with { pool, _ in
            let bundled = try Migration.bundled
            try await Migrator(migrations: bundled.filter { $0.version <= 17 }).migrate(pool, logger: testLogger)
            // Today's code also writes the live channel's feed (0027): a stand-in for its table
            // while the schema is 0017's, dropped before the migrations run on. And it reads
            // how a device is addressed (0028) and what its token is for, and a notification's Live
            // Activity (0029): the columns, dropped likewise; whether a tenant has a webhook
            // endpoint (0030); and a browser's keys (0035).
            try await pool.withConnection { connection in
                try await connection.executeScript(
                    """
                    CREATE TABLE live_pending (id bigint GENERATED ALWAYS AS IDENTITY, tenant_id uuid, kind text, person_id uuid,
                        conversation_id uuid, activity_id uuid, about_person uuid, payload jsonb, created_at timestamptz DEFAULT now());
                    GRANT INSERT ON live_pending TO herald_app;
                    ALTER TABLE devices ADD COLUMN address text NOT NULL DEFAULT 'token';
                    ALTER TABLE devices DROP CONSTRAINT devices_token_unique;
                    ALTER TABLE devices ADD CONSTRAINT devices_token_unique UNIQUE (tenant_id, provider, address, token);
                    ALTER TABLE devices ADD COLUMN kind text NOT NULL DEFAULT 'alert', ADD COLUMN activity_id uuid;
                    ALTER TABLE devices ADD COLUMN webpush_p256dh text, ADD COLUMN webpush_auth text;
                    ALTER TABLE notifications ADD COLUMN live jsonb;
                    CREATE TABLE webhook_endpoints (tenant_id uuid, id uuid);
                    GRANT SELECT ON webhook_endpoints TO herald_app, herald_dispatcher
                    """)
            }
            let store = Store(pool: pool, logger: testLogger)
            let fixture = try await WorkflowFixture.make(store)
            try await fixture.run { session in
                _ = try await session.registerDevice(
                    email: "chidi@acme.test", token: "old-android-phone", app: .member, platform: .android, provider: .fcm)
                _ = try await session.registerDevice(
                    email: "chidi@acme.test", token: String(repeating: "ab", count: 32), app: .member, platform: .ios, provider: .apns)
            }
            for _ in 0..<3 { _ = try await fixture.assign(priority: .p2) }
            // History as the previous fan-out wrote it, for events of today and of 3, 10 and 40
            // days ago: notification ids UUIDv7 of their time, delivery ids random (v4),
            // attempt ids UUIDv7 of the attempt; one delivery retried once.
            try await pool.withTransaction(setup: "") { connection in
                try await connection.query(
                    """
                    CREATE FUNCTION pg_temp.v7(at timestamptz) RETURNS uuid LANGUAGE sql AS $$
                        SELECT (lpad(to_hex(floor(extract(epoch FROM at) * 1000)::bigint), 12, '0') || '7'
                                || substr(md5(random()::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid
                    $$
                    """)
                try await connection.query(
                    """
                    INSERT INTO outbox (tenant_id, id, kind, activity_id, actor_id, recipient_ids, payload, occurred_at, fanned_out_at)
                    SELECT o.tenant_id, pg_temp.v7(now() - make_interval(days => ago)), o.kind, o.activity_id, o.actor_id,
                           o.recipient_ids, o.payload, now() - make_interval(days => ago), now() - make_interval(days => ago)
                    FROM (SELECT * FROM outbox ORDER BY seq LIMIT 1) o, unnest(ARRAY[3, 10, 40]) ago
                    """)
                try await connection.query(
                    """
                    INSERT INTO notifications (tenant_id, id, event_id, kind, recipient_id, app, activity_id, title, body, data, badge,
                                               sound, thread_id, status, event_at, created_at, decision)
                    SELECT o.tenant_id, pg_temp.v7(o.occurred_at), o.id, o.kind, r, 'member', o.activity_id, 'Title ' || o.seq, 'Body',
                           '{}', 1, true, 'thread', 'queued', o.occurred_at, o.occurred_at, 'send'
                    FROM outbox o, unnest(o.recipient_ids) r
                    """)
                try await connection.query(
                    """
                    INSERT INTO deliveries (tenant_id, id, notification_id, device_id, provider, status, attempts, deadline_at,
                                            sent_at, created_at)
                    SELECT n.tenant_id, gen_random_uuid(), n.id, v.id, v.provider, 'sent', 1, n.created_at + interval '1 day',
                           n.created_at, n.created_at
                    FROM notifications n JOIN devices v ON v.tenant_id = n.tenant_id AND v.person_id = n.recipient_id
                    """)
                try await connection.query(
                    """
                    INSERT INTO delivery_attempts (tenant_id, id, delivery_id, attempt, worker, started_at, finished_at, outcome,
                                                   http_status, counted)
                    SELECT d.tenant_id, pg_temp.v7(d.created_at + make_interval(secs => a)), d.id, a, 'old-worker', d.created_at,
                           d.created_at, CASE WHEN a = 1 AND d.provider = 'apns' THEN 'retry' ELSE 'delivered' END,
                           CASE WHEN a = 1 AND d.provider = 'apns' THEN 503 ELSE 200 END, true
                    FROM deliveries d, generate_series(1, CASE WHEN d.provider = 'apns' THEN 2 ELSE 1 END) a
                    """)
            }
            let before = try await pool.query(Self.fingerprint).map { try $0.decode(String.self, at: 0) }
            let counts: PostgresQuery =
                "SELECT (SELECT count(*) FROM notifications), (SELECT count(*) FROM deliveries), (SELECT count(*) FROM delivery_attempts)"
            let countsBefore = try await pool.query(counts).single().decode((Int, Int, Int).self)
            #expect(countsBefore.0 == 6 && countsBefore.1 == 12 && countsBefore.2 == 18)

            try await pool.withConnection { connection in
                try await connection.executeScript(
                    """
                    DROP TABLE live_pending;
                    DROP TABLE webhook_endpoints;
                    ALTER TABLE devices DROP COLUMN address, DROP COLUMN kind, DROP COLUMN activity_id, DROP COLUMN webpush_p256dh,
                        DROP COLUMN webpush_auth;
                    ALTER TABLE notifications DROP COLUMN live;
                    ALTER TABLE devices ADD CONSTRAINT devices_token_unique UNIQUE (tenant_id, provider, token)
                    """)
            }
            let applied = try await Migrator(migrations: bundled).migrate(pool, logger: testLogger)
            #expect(applied.first?.version == 18)

            let after = try await pool.query(Self.fingerprint).map { try $0.decode(String.self, at: 0) }
            #expect(after == before)
            let countsAfter = try await pool.query(counts).single().decode((Int, Int, Int).self)
            #expect(countsAfter == countsBefore)
            // Each row lies in the partition of its event's week (UTC, named by its Monday).
            let misplaced = try await pool.query(
                """
                SELECT n.tableoid::regclass::text, d.tableoid::regclass::text, a.tableoid::regclass::text,
                       to_char(date_trunc('week', o.occurred_at AT TIME ZONE 'UTC'), 'YYYYMMDD')
                FROM notifications n
                JOIN outbox o ON o.tenant_id = n.tenant_id AND o.id = n.event_id
                JOIN deliveries d ON d.tenant_id = n.tenant_id AND d.notification_id = n.id
                JOIN delivery_attempts a ON a.tenant_id = d.tenant_id AND a.delivery_id = d.id
                """
            ).map { try $0.decode((String, String, String, String).self) }.filter { notification, delivery, attempt, day in
                notification != "notifications_\(day)" || delivery != "deliveries_\(day)" || attempt != "delivery_attempts_\(day)"
            }
            #expect(misplaced.isEmpty, "\(misplaced)")
            // Every week from the oldest event's through a week ahead has its partitions.
            let weeks = try await store.historyPartitions().map(\.day)
            var calendar = Calendar(identifier: .iso8601)
            calendar.timeZone = .gmt
            func monday(_ date: Date) -> LocalDate { LocalDate(calendar.dateInterval(of: .weekOfYear, for: date)?.start ?? date, in: .gmt) }
            let first = Date().addingTimeInterval(-40 * 86_400)
            let last = Date().addingTimeInterval(7 * 86_400)
            #expect(weeks.first == monday(first) && weeks.last == monday(last) && weeks.contains(monday(Date())))
            let span =
                calendar.dateComponents(
                    [.day], from: calendar.dateInterval(of: .weekOfYear, for: first)?.start ?? first,
                    to: calendar.dateInterval(of: .weekOfYear, for: last)?.start ?? last
                ).day ?? 0
            #expect(weeks.count == span / 7 + 1)
            // History reads the moved rows: Chidi's six notifications, each sent to both phones.
            let history = try await fixture.run { session in
                try await session.history(viewer: "root@acme.test", filter: HistoryFilter(limit: 50))
            }
            #expect(history.count == 6, "\(history.map { ($0.title, $0.status, $0.devicesSent) })")
            #expect(history.allSatisfy { $0.status == "sent" && $0.devicesSent == 2 })
        }
    }
}
