import Foundation
import HeraldCore
import HeraldPostgres

/// `AccessPolicy`'s rules as the conditions the store's statements filter rows by: one
/// condition per rule, each beside the rule it writes (tests pin each to its rule, case by
/// case, on a real database). Those who run the tenant get `TRUE`.
extension PostgresQuery.StringInterpolation {
    /// `AccessPolicy.maySeeActivity`, for an activity `a`.
    mutating func appendInterpolation(activityVisibleTo policy: AccessPolicy) {
        guard let person = policy.personID, !policy.runsTheTenant else { return appendLiteral("TRUE") }
        appendLiteral("(a.assignee_id = ")
        appendInterpolation(person)
        appendLiteral(" OR EXISTS (SELECT 1 FROM team_members m WHERE m.tenant_id = a.tenant_id AND m.team_id = a.team_id AND m.person_id = ")
        appendInterpolation(person)
        appendLiteral(" AND m.role = 'manager'))")
    }

    /// `AccessPolicy.maySeeNotification`, for a notification `n`.
    mutating func appendInterpolation(notificationVisibleTo policy: AccessPolicy) {
        guard let person = policy.personID, !policy.runsTheTenant else { return appendLiteral("TRUE") }
        appendLiteral("(n.recipient_id = ")
        appendInterpolation(person)
        appendLiteral(" OR n.team_id IN (SELECT team_id FROM team_members WHERE tenant_id = n.tenant_id AND person_id = ")
        appendInterpolation(person)
        appendLiteral(" AND role = 'manager'))")
    }

    /// `AccessPolicy.mayTrace`, for a message `m`.
    mutating func appendInterpolation(messageTraceableBy policy: AccessPolicy) {
        guard let person = policy.personID, !policy.runsTheTenant else { return appendLiteral("TRUE") }
        appendInterpolation(messageReadableBy: person)
    }

    /// `AccessPolicy.mayRead`, for a message `m` and a person.
    mutating func appendInterpolation(messageReadableBy person: UUID) {
        appendLiteral("EXISTS (SELECT FROM conversation_participants cp WHERE cp.tenant_id = m.tenant_id AND cp.conversation_id = m.conversation_id")
        appendLiteral(" AND cp.person_id = ")
        appendInterpolation(person)
        appendLiteral(" AND (cp.left_at IS NULL OR m.stored_at <= cp.left_at))")
    }

    /// ` AND ` `messageReadableBy` when there is a reader; nothing otherwise.
    mutating func appendInterpolation(readableBy reader: UUID?) {
        guard let reader else { return }
        appendLiteral(" AND ")
        appendInterpolation(messageReadableBy: reader)
    }

    /// `AccessPolicy.mayTakePart`, for a conversation `c` and a person.
    mutating func appendInterpolation(takesPartIn person: UUID) {
        appendLiteral("EXISTS (SELECT FROM conversation_participants cp WHERE cp.tenant_id = c.tenant_id AND cp.conversation_id = c.id")
        appendLiteral(" AND cp.person_id = ")
        appendInterpolation(person)
        appendLiteral(" AND cp.left_at IS NULL)")
    }
}

extension TenantSession {
    /// Where `person` stands in conversation `id` (nil: never took part), for `AccessPolicy`.
    func participation(of person: Person, in id: UUID) async throws -> AccessPolicy.Participation? {
        let rows = try await connection.query(
            """
            SELECT left_at FROM conversation_participants
            WHERE tenant_id = \(tenantID) AND conversation_id = \(id) AND person_id = \(person.id)
            """)
        guard let row = rows.first else { return nil }
        return try row.decode(Date?.self, at: 0).map { .left(at: $0) } ?? .present
    }
}
