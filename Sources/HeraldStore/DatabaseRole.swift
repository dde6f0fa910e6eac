/// The database roles Herald's connections work as (created by the migrations; the owner
/// runs migrations and deletes tenants).
public enum DatabaseRole: String, Sendable, CaseIterable {
    /// The workflow in one tenant's scope: row-level security binds it to `herald.tenant_id`.
    case app = "herald_app"
    /// The dispatcher: the queue across tenants, no workflow tables.
    case dispatcher = "herald_dispatcher"
    /// Finding the credential a request presents, across tenants: reads credentials (and
    /// stamps their last use), nothing else.
    case authenticator = "herald_authenticator"
    /// The live channel across tenants: sequencing its feed, servers and presence, nothing else.
    case live = "herald_live"
    /// The webhooks across tenants: their feed cursor, messages and attempts, and the feed.
    case webhooks = "herald_webhooks"

    /// For a session's setup: every statement after it works as this role.
    public var forSession: String { "SET ROLE \(rawValue)" }
    /// For a transaction's setup: the transaction works as this role.
    public var forTransaction: String { "SET LOCAL ROLE \(rawValue)" }
}
