import Foundation
import HeraldCore
import HeraldPostgres

/// Fixtures written set-based for `herald bench`: 10,000 people added one by one through the
/// workflow would take it minutes. Nothing else uses them.
extension TenantSession {
    /// Adds `members` members (`member0@bench.test`…) to `team`, each with `devicesPerMember`
    /// Android member-app devices whose tokens are `<tokenPrefix><member>-<device>`.
    public func addBulkMembers(team: Team, members: Int, devicesPerMember: Int, tokenPrefix: String) async throws {
        try await connection.query(
            """
            WITH people AS (
                INSERT INTO people (tenant_id, id, email, display_name)
                SELECT \(tenantID), gen_random_uuid(), 'member' || g || '@bench.test', 'Member ' || g FROM generate_series(0, \(members - 1)) g
                RETURNING id, email
            ), memberships AS (
                INSERT INTO team_members (tenant_id, team_id, person_id, role) SELECT \(tenantID), \(team.id), id, 'member' FROM people
            )
            INSERT INTO devices (tenant_id, id, person_id, token, app, platform, provider)
            SELECT \(tenantID), gen_random_uuid(), p.id, \(tokenPrefix) || split_part(split_part(p.email, '@', 1), 'member', 2) || '-' || d,
                   'member', 'android', 'fcm'
            FROM people p, generate_series(0, \(devicesPerMember - 1)) d
            """)
    }

    /// The emails of the people `addBulkMembers` added, in their order.
    public func bulkMemberEmails() async throws -> [String] {
        try await connection.query(
            "SELECT email FROM people WHERE tenant_id = \(tenantID) AND email LIKE 'member%' ORDER BY length(email), email"
        ).map { try $0.decode(String.self, at: 0) }
    }

    /// A group of everyone in `team`, created by `creator`.
    public func addBulkGroup(of team: Team, by creator: Person, name: String) async throws -> UUID {
        let id = UUID.v7()
        try await connection.query(
            """
            INSERT INTO conversations (tenant_id, id, team_id, kind, name, created_by)
            VALUES (\(tenantID), \(id), \(team.id), 'group', \(name), \(creator.id))
            """)
        try await connection.query(
            """
            INSERT INTO conversation_participants (tenant_id, conversation_id, person_id)
            SELECT \(tenantID), \(id), person_id FROM team_members WHERE tenant_id = \(tenantID) AND team_id = \(team.id)
            """)
        return id
    }

    /// Every delivery of the tenant recorded as sent at its first attempt, as after a burn-down.
    public func markEveryDeliverySent() async throws {
        try await connection.query(
            """
            INSERT INTO delivery_attempts (tenant_id, id, delivery_id, attempt, worker, started_at, finished_at, outcome, http_status, counted)
            SELECT tenant_id, herald_child_id(id, gen_random_uuid()::text), id, 1, 'bench', now(), now(), 'delivered', 200, true
            FROM deliveries WHERE tenant_id = \(tenantID)
            """)
        try await connection.query(
            """
            UPDATE deliveries SET status = 'sent', attempts = 1, sent_at = now(), lease_owner = NULL, lease_expires_at = NULL
            WHERE tenant_id = \(tenantID)
            """)
    }
}

extension Store {
    /// Statistics for the tables fixtures just filled (production tables have them from
    /// autovacuum; without them the planner joins 10,000 participants by scanning).
    public enum FixtureTables: String, Sendable {
        case directory = "people, team_members, devices"
        case participants = "conversation_participants"
        case queue = "outbox, notifications, deliveries, delivery_attempts"
    }

    public func analyze(_ tables: FixtureTables) async throws {
        try await pool.query("ANALYZE \(unsafeRaw: tables.rawValue)")
    }

    /// The server process of one of the pool's connections (for its CPU time).
    public func backendProcessID() async throws -> Int {
        try await pool.query("SELECT pg_backend_pid()").single().decode(Int.self, at: 0)
    }

    /// Deliveries of `tenants` that reached an end (neither queued nor being sent).
    public func finishedDeliveries(tenants: [UUID]) async throws -> Int {
        try await pool.withTransaction(setup: DatabaseRole.dispatcher.forTransaction) { connection in
            try await connection.query(
                "SELECT count(*) FROM deliveries WHERE tenant_id = ANY(\(tenants)) AND status NOT IN ('queued', 'sending')"
            ).single().decode(Int.self, at: 0)
        }
    }

    /// Webhook messages of `tenant`, and how many of them were delivered.
    public func webhookMessages(tenant: UUID) async throws -> (total: Int, delivered: Int) {
        try await pool.withTransaction(setup: WebhookQueue.setup) { connection in
            try await connection.query(
                "SELECT count(*)::int, (count(*) FILTER (WHERE status = 'delivered'))::int FROM webhook_messages WHERE tenant_id = \(tenant)"
            ).single().decode((Int, Int).self)
        }
    }

    /// What the database server was doing, for a bench's timeline: buffers its checkpoints
    /// wrote and how many checkpoints began (pg_stat_bgwriter), the WAL written (pg_stat_wal),
    /// what its autovacuum workers are running now, and the tables autovacuum finished with in
    /// the last second (a vacuum of a small table begins and ends between two looks).
    public func serverActivity() async throws -> ServerActivity {
        let (buffers, checkpoints, wal, autovacuum) = try await pool.query(
            """
            SELECT b.buffers_checkpoint::bigint, (b.checkpoints_timed + b.checkpoints_req)::bigint, w.wal_bytes::bigint,
                   ARRAY(SELECT coalesce(nullif(query, ''), 'autovacuum') FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'
                         UNION ALL
                         SELECT 'autovacuum: VACUUM ' || relname || ' (ended)' FROM pg_stat_all_tables
                         WHERE last_autovacuum > now() - interval '1 second'
                         UNION ALL
                         SELECT 'autovacuum: ANALYZE ' || relname || ' (ended)' FROM pg_stat_all_tables
                         WHERE last_autoanalyze > now() - interval '1 second')
            FROM pg_stat_bgwriter b, pg_stat_wal w
            """
        ).single().decode((Int64, Int64, Int64, [String]).self)
        return ServerActivity(checkpointBuffers: buffers, checkpoints: checkpoints, walBytes: wal, autovacuum: autovacuum)
    }
}

/// What the database server was doing at one moment (`Store.serverActivity`).
public struct ServerActivity: Sendable {
    public let checkpointBuffers: Int64
    public let checkpoints: Int64
    public let walBytes: Int64
    /// The statements its autovacuum workers run (`autovacuum: VACUUM public.deliveries…`).
    public let autovacuum: [String]
}
