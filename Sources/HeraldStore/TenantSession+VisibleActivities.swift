import Foundation
import HeraldCore
import HeraldPostgres

/// Activities as someone may see them: an admin (or a tenant key, `viewer` nil) sees every
/// one; a manager those of the teams they manage; anyone those assigned to them. Something
/// a viewer may not see is not found, as if it did not exist.
extension TenantSession {
    /// What a list of activities may be narrowed to.
    public struct ActivityFilter: Sendable {
        public var team: String?
        public var status: ActivityStatus?
        public var assignee: String?

        public init(team: String? = nil, status: ActivityStatus? = nil, assignee: String? = nil) {
            self.team = team
            self.status = status
            self.assignee = assignee
        }
    }

    /// A page of the activities `viewer` may see, newest first, after `cursor`.
    /// - Parameter limit: 1 to 10,000 (the API allows at most 200 and says so itself).
    public func activities(viewer: Person?, filter: ActivityFilter, limit: Int, after cursor: PageCursor?) async throws -> Page<ActivityRecord> {
        let limit = max(1, min(limit, 10_000))
        var teamID: UUID?
        var assigneeID: UUID?
        if let slug = filter.team { teamID = try await team(slug: slug).id }
        if let email = filter.assignee { assigneeID = try await person(email: email).id }
        let query: PostgresQuery = """
            \(unsafeRaw: Self.activitySelect)
            WHERE a.tenant_id = \(tenantID) AND \(activityVisibleTo: AccessPolicy(viewer))\(and: "a.team_id =", teamID)\(and: "a.status =", filter.status?.rawValue)\(and: "a.assignee_id =", assigneeID)\(after: cursor, in: "a")
            ORDER BY a.created_at DESC, a.id DESC
            \(limit: limit + 1)
            """
        let rows = try await connection.query(query.inBinary)
        let activities = try rows.prefix(limit).map(Self.activity)
        let next = rows.count > limit ? activities.last.map { PageCursor(at: $0.createdAt, id: $0.id) } : nil
        return Page(items: activities, next: next)
    }

    /// One activity, if `viewer` may see it.
    /// - Throws: `StoreError.notFound` (also for one they may not see).
    public func activity(id: UUID, viewer: Person?) async throws -> ActivityRecord {
        let query: PostgresQuery =
            "\(unsafeRaw: Self.activitySelect) WHERE a.tenant_id = \(tenantID) AND a.id = \(id) AND \(activityVisibleTo: AccessPolicy(viewer))"
        let rows = try await connection.query(query.inBinary)
        guard let row = rows.first else { throw StoreError(.notFound, "no activity \(id.lowercasedString)") }
        return try Self.activity(row)
    }
}
