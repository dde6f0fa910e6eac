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

    /// `AccessPolicy.maySeePerson`, for a device `d` (its owner's).
    mutating func appendInterpolation(deviceVisibleTo policy: AccessPolicy) {
        guard let person = policy.personID, !policy.runsTheTenant else { return appendLiteral("TRUE") }
        appendLiteral("d.person_id = ")
        appendInterpolation(person)
    }

    /// `AccessPolicy.mayTakePart`, for a participant row `alias` of `conversation_participants`:
    /// in the conversation now (not left, not removed).
    mutating func appendInterpolation(takingPart alias: String) {
        appendLiteral("\(alias).left_at IS NULL")
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

    /// `AccessPolicy.mayReadWords`, for a notification `n` the policy may see: its recipient,
    /// or any notification about no conversation, or someone who takes part in its
    /// conversation (or did when it was stored). Those who run the tenant get no exception.
    mutating func appendInterpolation(notificationWordsReadableBy policy: AccessPolicy) {
        appendWordsReadable(by: policy, recipient: "n.recipient_id", conversation: "n.conversation_id", at: "n.event_at", tenant: "n.tenant_id")
    }

    /// `AccessPolicy.mayReadWords`, for a digest `d` (its scope's name is its title's words).
    mutating func appendInterpolation(digestWordsReadableBy policy: AccessPolicy) {
        appendWordsReadable(by: policy, recipient: "d.person_id", conversation: "d.conversation_id", at: "d.opened_at", tenant: "d.tenant_id")
    }

    private mutating func appendWordsReadable(by policy: AccessPolicy, recipient: String, conversation: String, at: String, tenant: String) {
        guard let person = policy.personID else { return appendLiteral("(\(conversation) IS NULL)") }
        appendLiteral("(\(conversation) IS NULL OR \(recipient) = ")
        appendInterpolation(person)
        appendLiteral(
            " OR EXISTS (SELECT FROM conversation_participants cp WHERE cp.tenant_id = \(tenant) AND cp.conversation_id = \(conversation)"
                + " AND cp.person_id = ")
        appendInterpolation(person)
        appendLiteral(" AND (cp.left_at IS NULL OR \(at) <= cp.left_at)))")
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

    /// Who may see a live frame, for a feed row `f`, as a query of one column, `person_id`
    /// (its audience; joined to the readers at hand by equality, so a row costs what its
    /// audience holds, not what the server's sockets number): a row for one person
    /// (`person_id`: their notifications, the receipts of their messages) is theirs alone, and
    /// about a conversation only while `mayRead` allows; a conversation's frames by `mayRead`
    /// (taking part when it was written; the receipt's own person excepted); an activity's by
    /// `maySeeActivity` (admins, its assignee, its team's managers).
    mutating func appendInterpolation(liveRowAudience _: Void) {
        appendLiteral(
            """
            SELECT f.person_id AS person_id WHERE f.person_id IS NOT NULL
                AND (f.conversation_id IS NULL
                     OR EXISTS (SELECT FROM conversation_participants cp WHERE cp.tenant_id = f.tenant_id
                                AND cp.conversation_id = f.conversation_id AND cp.person_id = f.person_id
                                AND (cp.left_at IS NULL OR f.created_at <= cp.left_at)))
            UNION ALL
            SELECT cp.person_id FROM conversation_participants cp
            WHERE f.person_id IS NULL AND cp.tenant_id = f.tenant_id AND cp.conversation_id = f.conversation_id
              AND (cp.left_at IS NULL OR f.created_at <= cp.left_at) AND cp.person_id IS DISTINCT FROM f.about_person
            UNION ALL
            SELECT v.person_id FROM (
                SELECT p.id AS person_id FROM people p WHERE p.tenant_id = f.tenant_id AND p.is_admin
                UNION SELECT a.assignee_id FROM activities a WHERE a.tenant_id = f.tenant_id AND a.id = f.activity_id
                UNION SELECT m.person_id FROM activities a
                      JOIN team_members m ON m.tenant_id = a.tenant_id AND m.team_id = a.team_id AND m.role = 'manager'
                      WHERE a.tenant_id = f.tenant_id AND a.id = f.activity_id
            ) v WHERE f.person_id IS NULL AND f.conversation_id IS NULL AND f.activity_id IS NOT NULL
            """)
    }

    /// A person in a condition: a column of the statement, or a value bound as a parameter.
    enum PersonTerm {
        case column(String)
        case value(UUID)
    }

    private mutating func append(_ term: PersonTerm) {
        switch term {
        case .column(let name): appendLiteral(name)
        case .value(let id): appendInterpolation(id)
        }
    }

    /// `AccessPolicy.maySeePresence`, of `subject` for `reader`, in this tenant: themselves, or
    /// someone who shares a team with them, or takes part in a conversation with them now. The
    /// one statement of the rule in SQL; an index lookup per team or conversation of `subject`,
    /// whatever the size of the teams. `OFFSET 0` keeps each test a lookup for the row at hand:
    /// without it PostgreSQL may hash the whole subquery once (every member of the reader's
    /// teams, or every pair of teammates), which grows with the teams. A reader given as a value
    /// (one viewer, many subjects) has their teams and conversations read once for the statement
    /// (an `ARRAY(…)` naming no column of the row is evaluated once) and each subject's checked
    /// against them: a `presence.subscribe` of fifty people costs a fifth less so. A reader in a
    /// column keeps the join: reading the reader's first costs more when it changes every row.
    mutating func appendInterpolation(presenceOf subject: PersonTerm, visibleTo reader: PersonTerm) {
        appendLiteral("(")
        append(subject)
        appendLiteral(" = ")
        append(reader)
        switch reader {
        case .value:
            appendLiteral(
                " OR EXISTS (SELECT FROM team_members ta WHERE ta.tenant_id = herald_current_tenant() AND ta.person_id = ")
            append(subject)
            appendLiteral(
                " AND ta.team_id = ANY (ARRAY(SELECT tb.team_id FROM team_members tb WHERE tb.tenant_id = herald_current_tenant() AND tb.person_id = "
            )
            append(reader)
            appendLiteral(
                ")) OFFSET 0) OR EXISTS (SELECT FROM conversation_participants ca"
                    + " WHERE ca.tenant_id = herald_current_tenant() AND ca.left_at IS NULL AND ca.person_id = ")
            append(subject)
            appendLiteral(
                " AND ca.conversation_id = ANY (ARRAY(SELECT cb.conversation_id FROM conversation_participants cb"
                    + " WHERE cb.tenant_id = herald_current_tenant() AND cb.left_at IS NULL AND cb.person_id = ")
            append(reader)
            appendLiteral(")) OFFSET 0))")
        case .column:
            appendLiteral(
                " OR EXISTS (SELECT FROM team_members ta JOIN team_members tb ON tb.tenant_id = ta.tenant_id AND tb.team_id = ta.team_id"
                    + " WHERE ta.tenant_id = herald_current_tenant() AND ta.person_id = ")
            append(subject)
            appendLiteral(" AND tb.person_id = ")
            append(reader)
            appendLiteral(
                " OFFSET 0) OR EXISTS (SELECT FROM conversation_participants ca JOIN conversation_participants cb"
                    + " ON cb.tenant_id = ca.tenant_id AND cb.conversation_id = ca.conversation_id AND cb.left_at IS NULL"
                    + " WHERE ca.tenant_id = herald_current_tenant() AND ca.left_at IS NULL AND ca.person_id = ")
            append(subject)
            appendLiteral(" AND cb.person_id = ")
            append(reader)
            appendLiteral(" OFFSET 0))")
        }
    }

    /// Whether a conversation `c`'s name is shown on `owner`'s page to `viewer` (nil: the owner
    /// themself): `AccessPolicy.mayTakePart`, as for its messages.
    mutating func appendInterpolation(conversationNamesFor viewer: AccessPolicy?, of owner: UUID) {
        guard let viewer, viewer.personID != owner else { return appendLiteral("TRUE") }
        guard let person = viewer.personID else { return appendLiteral("FALSE") }
        appendInterpolation(takesPartIn: person)
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
        try Self.participation(try await connection.query(participationQuery(of: person, in: id)))
    }

    /// The statement `participation(of:in:)` runs; `participation(_:)` reads its rows.
    func participationQuery(of person: Person, in id: UUID) -> PostgresQuery {
        """
        SELECT left_at FROM conversation_participants
        WHERE tenant_id = \(tenantID) AND conversation_id = \(id) AND person_id = \(person.id)
        """
    }

    static func participation(_ rows: PostgresRows) throws -> AccessPolicy.Participation? {
        guard let row = rows.first else { return nil }
        return try row.decode(Date?.self, at: 0).map { .left(at: $0) } ?? .present
    }
}
