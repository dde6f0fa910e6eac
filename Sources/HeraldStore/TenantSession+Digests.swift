import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTemplates

/// A digest about to be sent, for its push to be worded (`DigestWording`): the store keeps
/// what was gathered, fan-out's code says it (HeraldDispatch, `FanOut.digestContent`).
public struct DigestToSend: Sendable {
    public let id: UUID
    /// What it gathers: a team or a conversation, its name, and its stack on the phone.
    public let scopeID: UUID
    public let scopeName: String
    public let teamID: UUID?
    public let conversationID: UUID?
    /// The notifications it sends, oldest first, each with what it was about.
    public let items: [(notificationID: UUID, item: TemplateVariables.DigestItem)]
    /// The person's language and badge.
    public let locale: String
    public let badge: Int
}

/// How a digest's push is worded: in the tenant's templates, by the code that words every push.
public typealias DigestWording = @Sendable (DigestToSend, TenantTemplates) throws -> NotificationContent

/// What closing one digest did.
public enum DigestClosing: Sendable, Equatable {
    /// Pushed as one notification (`notification`) of `items`; `left` items had left it.
    case sent(digest: UUID, notification: UUID, items: Int, left: Int)
    /// Every item had left: nothing pushed.
    case empty(digest: UUID, left: Int)
    /// Due in the person's quiet hours: closed again when they end.
    case waiting(digest: UUID, until: Date)
    /// Another worker holds it, or it was closed or moved meanwhile: nothing done.
    case notDue
}

extension TenantSession {
    /// Closes the digest `id` if it is open (or due) and due at `now`, in this session's
    /// transaction (docs/notifications.md): locks it (after its person's digest lock, which
    /// fan-out takes too, and `SKIP LOCKED`: a digest another worker is closing is left to
    /// it), judges each item again (`DigestPlan`), and then either writes why it waits, or
    /// that it is empty, or the one notification of what is left with a delivery to each of
    /// the app's devices: the same write as fan-out's, so the digest is retried, expires and
    /// is reported like any notification. The items still in it say which digest, and when.
    /// - Parameter email: whether the worker can send email (a digest chosen by email goes so).
    func closeDigest(
        _ id: UUID, now: Date, deadline: Duration, templates: TemplateCatalog, email: Bool, wording: DigestWording
    ) async throws -> DigestClosing {
        guard
            let person = try await connection.query(
                "SELECT person_id FROM digests WHERE tenant_id = \(tenantID) AND id = \(id) AND status IN ('open', 'due') AND closes_at <= \(now)"
            ).first?.decode(UUID.self, at: 0)
        else { return .notDue }
        let locked = try await connection.query(
            """
            SELECT pg_try_advisory_xact_lock(\(DeliveryQueue.digestLockClass)::int, \(unsafeRaw: DeliveryQueue.digestLockKey(tenant: "t.id", person: "t.person")))
            FROM (SELECT \(tenantID)::uuid AS id, \(person)::uuid AS person) t
            """
        ).single().decode(Bool.self, at: 0)
        guard locked else { return .notDue }
        let rows = try await connection.query(
            """
            SELECT app, scope_id, team_id, conversation_id, scope_name FROM digests
            WHERE tenant_id = \(tenantID) AND id = \(id) AND status IN ('open', 'due') AND closes_at <= \(now)
            FOR UPDATE SKIP LOCKED
            """)
        guard let row = rows.first else { return .notDue }
        let (appName, scope, team, conversation, scopeName) = try row.decode((String, UUID, UUID?, UUID?, String).self)
        guard let app = AppKind(rawValue: appName) else { return .notDue }
        let profile = try await DeliveryQueue.profiles([EventRecipient(id: person, app: app)], tenant: tenantID, on: connection)[
            DeliveryQueue.Key(id: person, app: app)]
        let isAdmin =
            try await connection.query("SELECT is_admin FROM people WHERE tenant_id = \(tenantID) AND id = \(person)")
            .first?.decode(Bool.self, at: 0) ?? false
        let items = try await digestItems(id, recipient: AccessPolicy(personID: person, isAdmin: isAdmin))
        let plan = DigestPlan.close(items.map(\.state), quietHours: profile?.quietHours, timeZone: profile?.timeZone ?? "UTC", now: now)
        if case .wait(let until, let reason) = plan.outcome {
            try await connection.query(
                "UPDATE digests SET closes_at = \(until), reason = \(reason) WHERE tenant_id = \(tenantID) AND id = \(id)")
            return .waiting(digest: id, until: until)
        }
        if !plan.leaving.isEmpty {
            try await connection.query(
                """
                UPDATE notifications n SET status = 'cancelled', reason = l.reason
                FROM unnest(\(plan.leaving.map { items[$0.index].id })::uuid[], \(plan.leaving.map(\.reason))::text[]) AS l(id, reason)
                WHERE n.tenant_id = \(tenantID) AND n.id = l.id AND n.digest_id = \(id)
                """)
        }
        guard case .send(let kept) = plan.outcome, let profile else {
            let reason = profile == nil ? "empty: the person is gone" : "empty: every item left before it was sent"
            try await connection.query(
                """
                UPDATE digests SET status = 'empty', closed_at = \(now), reason = \(reason), items = \(items.count)
                WHERE tenant_id = \(tenantID) AND id = \(id)
                """)
            return .empty(digest: id, left: plan.leaving.count)
        }
        let sent = kept.map { items[$0] }
        let tenantTemplates = try await templates.templates(for: tenantID) { try await TemplateOverrideRows.read(tenant: $0, on: connection) }
        let content = try wording(
            DigestToSend(
                id: id, scopeID: scope, scopeName: scopeName, teamID: team, conversationID: conversation,
                items: sent.map { ($0.id, $0.item) }, locale: profile.locale, badge: profile.badge),
            tenantTemplates)
        var draft = NotificationDraft(
            eventID: id, kind: sent[0].kind, recipientID: person, app: app, teamID: team, activityID: nil, conversationID: conversation,
            content: content, eventAt: now, suppressedReason: nil)
        draft.kindName = "digest"
        if email { draft.email = profile.digestByEmail ? .only : .whenNoDevice }
        _ = try await DeliveryQueue.write([draft], events: [], tenant: tenantID, deadline: deadline, claim: nil, freshness: freshness, on: connection)
        let notification = try await connection.query(
            """
            UPDATE digests SET status = 'sent', closed_at = \(now), items = \(sent.count), reason = NULL,
                               notification_id = herald_child_id(id, id::text || person_id::text)
            WHERE tenant_id = \(tenantID) AND id = \(id)
            RETURNING notification_id
            """
        ).single().decode(UUID.self, at: 0)
        try await connection.query(
            """
            UPDATE notifications SET reason = \(DigestPlan.sentReason(at: now, others: sent.count - 1, timeZone: profile.timeZone))
            WHERE tenant_id = \(tenantID) AND id = ANY(\(sent.map(\.id))) AND digest_id = \(id)
            """)
        try await connection.query("SELECT pg_notify(\(DeliveryQueue.deliveriesChannel), \(tenantID.lowercasedString))")
        return .sent(digest: id, notification: notification, items: sent.count, left: plan.leaving.count)
    }

    /// A gathered item as closing needs it.
    struct DigestEntry {
        let id: UUID
        let kind: EventKind
        let item: TemplateVariables.DigestItem
        let state: DigestPlan.Item
    }

    /// The items still in digest `id`, oldest first, each with where it stands now: whether
    /// its activity moved on (a later change of status: the rule fan-out's supersede asks too),
    /// whether its message was read, and whether `recipient` may still see it (the access
    /// policy asked again, as a push now: the activity by `maySeeActivity`, a conversation's
    /// message by `mayTakePart`).
    func digestItems(_ id: UUID, recipient: AccessPolicy) async throws -> [DigestEntry] {
        let rows = try await connection.query(
            """
            SELECT n.id, n.kind, n.digest_item::text,
                   CASE WHEN n.activity_id IS NOT NULL
                        THEN EXISTS (SELECT FROM activities a WHERE a.tenant_id = n.tenant_id AND a.id = n.activity_id
                                     AND \(activityVisibleTo: recipient))
                        WHEN n.conversation_id IS NOT NULL
                        THEN EXISTS (SELECT FROM conversation_participants cp WHERE cp.tenant_id = n.tenant_id
                                     AND cp.conversation_id = n.conversation_id AND cp.person_id = n.recipient_id AND \(takingPart: "cp"))
                        ELSE true END,
                   CASE WHEN n.activity_id IS NOT NULL THEN (\(laterStatusChangeOf: "n.event_id", tenant: tenantID)) END,
                   CASE WHEN n.conversation_id IS NOT NULL THEN coalesce((
                       SELECT cp.last_read_seq >= m.seq FROM messages m
                       JOIN conversation_participants cp ON cp.tenant_id = m.tenant_id AND cp.conversation_id = m.conversation_id
                       WHERE m.tenant_id = n.tenant_id AND m.id = (n.data->>'messageID')::uuid AND cp.person_id = n.recipient_id), false)
                   ELSE false END
            FROM notifications n
            WHERE n.tenant_id = \(tenantID) AND n.digest_id = \(id) AND n.status = 'digested'
            ORDER BY n.event_at, n.id
            """)
        let decoder = JSONDecoder()
        return try rows.map { row in
            let (id, kind, item, visible, superseded, read) = try row.decode((UUID, String, String?, Bool, String?, Bool).self)
            // An unknown kind is the database's error, as everywhere (`decodeEnum`).
            let event: EventKind = try Self.decodeEnum(kind)
            let facts = try item.map { try decoder.decode(TemplateVariables.DigestItem.self, from: Data($0.utf8)) } ?? .init(event: event)
            return DigestEntry(id: id, kind: event, item: facts, state: DigestPlan.Item(supersededBy: superseded, read: read, visible: visible))
        }
    }
}

/// A digest as the console and `--json` show it.
public struct DigestRecord: Sendable, Equatable, Codable {
    public let id: UUID
    public let app: AppKind
    /// The team's or conversation's name.
    public let scope: String
    public let status: DigestStatus
    public let items: Int
    public let openedAt: Date
    /// When it is (or was) due.
    public let closesAt: Date
    public let closedAt: Date?
    /// Its own push, once sent.
    public let notificationID: UUID?
    /// Why it waits (quiet hours), or why nothing was sent.
    public let reason: String?

    enum CodingKeys: String, CodingKey {
        case id, app, scope, status, items, openedAt, closesAt, closedAt, reason
        case notificationID = "notificationId"
    }
}

extension TenantSession {
    /// `person`'s digests, newest first (the caller has checked that the viewer may see them).
    /// A conversation's digest is named to `viewer` only as its words are
    /// (`AccessPolicy.mayReadWords`): to the person, or to someone who takes part in it.
    public func digests(of person: Person, viewer: AccessPolicy, limit: Int = 20) async throws -> [DigestRecord] {
        try await connection.query(
            """
            SELECT d.id, d.app,
                   CASE WHEN \(digestWordsReadableBy: viewer) THEN d.scope_name ELSE \(AccessPolicy.withheldTitle) END,
                   d.status, d.items, d.opened_at, d.closes_at, d.closed_at, d.notification_id, d.reason FROM digests d
            WHERE d.tenant_id = \(tenantID) AND d.person_id = \(person.id)
            ORDER BY d.opened_at DESC, d.id DESC LIMIT \(limit)
            """
        ).map { row in
            let (id, app, scope, status, items, opened, closes, closed, notification, reason) =
                try row.decode((UUID, String, String, String, Int, Date, Date, Date?, UUID?, String?).self)
            return DigestRecord(
                id: id, app: try Self.decodeEnum(app), scope: scope, status: try Self.decodeEnum(status), items: items, openedAt: opened,
                closesAt: closes, closedAt: closed, notificationID: notification, reason: reason)
        }
    }
}
