import Foundation
import HeraldCore
import HeraldPostgres
import Logging

/// Herald's data, on one connection pool: the tenant directory, and tenant-scoped work
/// through `withTenant`.
public struct Store: Sendable {
    let pool: PostgresPool
    let logger: Logger
    /// When a device's registration goes stale and when it is removed (docs/apps.md).
    public let deviceFreshness: DeviceFreshness
    /// The one LISTEN connection of this store and of every store made from it
    /// (`withDispatcherPool`, `withPoolOfItsOwn`): the dispatcher's, the live channel's and
    /// the webhooks' wake-ups are subscriptions on it.
    public let notifier: PostgresNotifier

    /// The NOTIFY channel workers LISTEN on; its payload is the tenant id (a hint only).
    public static let outboxChannel = "herald_outbox"

    /// - Parameter notifier: the LISTEN connection to share; by default one of its own, on
    ///   `pool`'s database, made when something first listens.
    public init(pool: PostgresPool, logger: Logger, deviceFreshness: DeviceFreshness = .default, notifier: PostgresNotifier? = nil) {
        self.pool = pool
        self.logger = logger
        self.deviceFreshness = deviceFreshness
        self.notifier = notifier ?? PostgresNotifier(configuration: pool.configuration, logger: logger)
    }

    // MARK: Tenants

    /// Creates a tenant.
    /// - Throws: `StoreError.alreadyExists` when the slug is taken.
    public func createTenant(slug: String, name: String) async throws -> Tenant {
        let slug = try Input.slug(slug, field: "tenant")
        let name = try Input.name(name, field: "tenant name")
        do {
            let row = try await pool.query(
                """
                INSERT INTO tenants (id, slug, name) VALUES (\(UUID.v7()), \(slug), \(name))
                RETURNING id, slug, name, created_at
                """
            ).single()
            return try Self.tenant(row)
        } catch let error as PostgresError where error.isUniqueViolation {
            throw StoreError(.alreadyExists, "tenant \"\(slug)\" already exists")
        }
    }

    public func tenants() async throws -> [Tenant] {
        try await pool.query("SELECT id, slug, name, created_at FROM tenants ORDER BY slug").map(Self.tenant)
    }

    /// The tenant with this slug.
    /// - Throws: `StoreError.notFound`.
    public func tenant(slug: String) async throws -> Tenant {
        let rows = try await pool.query("SELECT id, slug, name, created_at FROM tenants WHERE slug = \(slug)")
        guard let row = rows.first else {
            throw StoreError(.notFound, "no tenant \"\(slug)\" (herald tenant list shows them)")
        }
        return try Self.tenant(row)
    }

    static func tenant(_ row: PostgresRow) throws -> Tenant {
        let (id, slug, name, createdAt) = try row.decode((UUID, String, String, Date).self)
        return Tenant(id: id, slug: slug, name: name, createdAt: createdAt)
    }

    // MARK: Tenant scope

    /// Runs `body` in one transaction that sees only `tenant`'s rows.
    ///
    /// The transaction switches to the `herald_app` role, which row-level security binds,
    /// and names the tenant in `herald.tenant_id`; every query in `body` also filters by
    /// tenant itself. Committed when `body` returns, rolled back when it throws.
    ///
    /// Should the connection fail (a failover), `body` runs again on a new one; should it fail
    /// during `COMMIT`, the outbox event the transaction wrote tells whether it committed
    /// (see `PostgresPool.withTransaction`), so no event is lost or written twice.
    ///
    /// - Parameter readOnly: for a body that only reads: `BEGIN READ ONLY` (a write fails),
    ///   and no round trip of its own for the `COMMIT` (see `PostgresPool.withTransaction`).
    public func withTenant<Result>(
        _ tenant: Tenant, readOnly: Bool = false, _ body: (TenantSession) async throws -> Result
    ) async throws -> Result {
        try await withTenantTransaction(tenant.id, readOnly: readOnly) { connection, ledger in
            try await body(
                TenantSession(connection: connection, tenant: tenant, logger: logger, ledger: ledger, freshness: deviceFreshness))
        }
    }

    /// The transaction `withTenant` runs in, for callers that know only the tenant's id: its
    /// outbox events are noted, so that an unanswered `COMMIT` is resolved by them.
    /// - Parameter settings: `SET LOCAL …` statements after the tenant's scope.
    func withTenantTransaction<Result>(
        _ tenantID: UUID, settings: String? = nil, readOnly: Bool = false, _ body: (PostgresConnection, OutboxLedger) async throws -> Result
    ) async throws -> Result {
        let ledger = OutboxLedger()
        let setup = Self.tenantScope(tenantID) + (settings.map { "; " + $0 } ?? "")
        return try await pool.withTransaction(
            setup: setup, readOnly: readOnly,
            resolveCommit: { try await Self.committed(ledger, tenant: tenantID, on: $0) },
            { connection in
                ledger.reset()
                return try await body(connection, ledger)
            })
    }

    /// Settings for a transaction that deletes many rows at once.
    ///
    /// PostgreSQL checks each deleted row's foreign keys with a statement of its own, one row
    /// at a time, planned once per connection and then kept. Planned from statistics that do
    /// not describe the rows being deleted (a queue analyzed while it held a few retried
    /// deliveries of another tenant), those checks were planned anew for every row, or planned
    /// as a scan of the whole referencing table for every row: deleting a tenant with 100,000
    /// deliveries took 2–4 minutes. Every foreign key has an index behind it (a test keeps it
    /// so), so one generic plan on that index is right whatever the statistics say.
    static let bulkDeletionSettings = plannedOnceOnIndexes

    /// Settings for a transaction whose statement's plan does not depend on its values: one
    /// plan a connection, made at its first run, rather than one at every run (PostgreSQL's
    /// own choice plans a statement again at every run while a plan for the values looks
    /// cheaper, whatever planning costs), and on the indexes, whatever the statistics said
    /// when it was made (a plan made while a table was empty read all of it at every run).
    static let plannedOnceOnIndexes = "SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL enable_seqscan = off"

    /// The statements that open a tenant's scope at the start of a transaction: the
    /// `herald_app` role, which row-level security binds, and the tenant's id.
    static func tenantScope(_ tenantID: UUID) -> String {
        // The id is a UUID, so its text is only hex digits and dashes.
        "\(DatabaseRole.app.forTransaction); SET LOCAL herald.tenant_id = '\(tenantID.lowercasedString)'"
    }
}

extension Store {
    /// Deletes a tenant and everything it owns (for `herald demo --reset`). One transaction.
    /// - Throws: `StoreError.notFound`.
    public func deleteTenant(slug: String) async throws {
        let tenant = try await tenant(slug: slug)
        try await pool.withTransaction(setup: Self.tenantScope(tenant.id) + "; " + Self.bulkDeletionSettings) { connection in
            for table in [
                "webhook_attempts", "webhook_messages", "webhook_endpoints", "delivery_attempts", "deliveries", "notifications", "inbox_counts",
                "digests",
                "messages",
                "conversation_participants", "conversations",
                "outbox",
                "activity_timers", "tenant_policies", "notification_preferences", "notification_channels", "quiet_hours", "activity_transitions",
                "devices", "activities", "team_members", "template_overrides", "teams", "idempotency_keys", "console_sessions",
                "credentials", "people",
                // Last: the deletions above count as departures (sql/0046).
                "presence_departures", "presence_departed"
            ] {
                try await connection.query("DELETE FROM \(identifier: table) WHERE tenant_id = \(tenant.id)")
            }
            try await connection.query("RESET ROLE")
            for table in ["live_pending", "live_feed", "live_presence", "live_tickets", "live_devices"] {
                try await connection.query("DELETE FROM \(identifier: table) WHERE tenant_id = \(tenant.id)")
            }
            try await connection.query("DELETE FROM tenants WHERE id = \(tenant.id)")
        }
    }
}
