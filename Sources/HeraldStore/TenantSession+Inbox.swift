import Foundation
import HeraldCore
import HeraldPostgres

/// What a page of the inbox shows (docs/inbox.md).
public struct InboxFilter: Sendable {
    /// `unseen`, `unread` or `all`.
    public enum Status: String, Sendable, CaseIterable {
        case unseen, unread, all
    }

    public var status: Status
    /// false: not archived (the default list); true: only archived.
    public var archived: Bool
    public var limit: Int
    /// Only items older than this one (the last of the page before), newest first.
    public var after: PageCursor?

    public init(status: Status = .all, archived: Bool = false, limit: Int = 50, after: PageCursor? = nil) {
        self.status = status
        self.archived = archived
        self.limit = limit
        self.after = after
    }
}

/// Which items a mark changes: these (at most `InboxTarget.maxIDs`), or every item told at or
/// before a time ("mark all").
public enum InboxTarget: Sendable, Equatable {
    case ids([UUID])
    case before(Date)

    public static let maxIDs = 200
}

/// Ids of a batch that are no items of the person's: nothing was written.
public struct InboxUnknownItems: Error, Sendable, Equatable {
    /// Their places in the batch, and the ids.
    public let unknown: [(index: Int, id: UUID)]

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.unknown.map(\.id) == rhs.unknown.map(\.id) }
}

extension TenantSession {
    /// A page of `person`'s inbox, newest first (one more than `filter.limit` is read by the
    /// API to know whether there is a next page).
    public func inbox(of person: Person, filter: InboxFilter) async throws -> [InboxItem] {
        guard (1...10_000).contains(filter.limit) else { throw InputError("limit must be between 1 and 10000") }
        // In binary: a page is some 1,400 values, a third of them ids and instants, which
        // PostgreSQL would otherwise write out as text and this process parse back.
        let query: PostgresQuery = """
            \(inboxItems: person, tenant: tenantID, policy: AccessPolicy(person))
            \(unsafeRaw: filter.status == .unseen ? "AND n.seen_at IS NULL" : filter.status == .unread ? "AND n.read_at IS NULL" : "")
            \(unsafeRaw: filter.archived ? "AND n.archived_at IS NOT NULL" : "AND n.archived_at IS NULL")\(after: filter.after, in: "n")
            ORDER BY n.created_at DESC, n.id DESC
            \(limit: filter.limit)
            """
        let rows = try await connection.query(query.inBinary)
        return try rows.map { try Self.inboxItem($0, person: person) }
    }

    /// One item of `person`'s. - Throws: `StoreError.notFound` when it is none of theirs.
    public func inboxItem(_ id: UUID, of person: Person) async throws -> InboxItem {
        let query: PostgresQuery = "\(inboxItems: person, tenant: tenantID, policy: AccessPolicy(person)) AND n.id = \(id)"
        let rows = try await connection.query(query.inBinary)
        guard let row = rows.first else { throw StoreError(.notFound, "no inbox item \(id.lowercasedString) of yours") }
        return try Self.inboxItem(row, person: person)
    }

    /// `person`'s counts and badge.
    public func inboxCounts(of person: UUID) async throws -> InboxCounts {
        try Self.inboxCounts(try await connection.query(inboxCountsQuery(of: person)).single())
    }

    /// The row of `person`'s counts that `inboxCounts(_:)` reads.
    private func inboxCountsQuery(of person: UUID) -> PostgresQuery {
        """
        SELECT \(unseenItemsOf: .value(person), tenant: "t.id")::int, \(unreadItemsOf: .value(person), tenant: "t.id")::int,
               \(unreadChatOf: .value(person), tenant: "t.id")::int
        FROM (VALUES (\(tenantID)::uuid)) AS t(id)
        """
    }

    /// `InboxCounts` from a row of the unseen items, the unread ones and the unread chat.
    private static func inboxCounts(_ row: PostgresRow) throws -> InboxCounts {
        let (unseen, unread, chat) = try row.decode((Int, Int, Int).self)
        return InboxCounts(unseen: min(unseen, unread), unread: unread, chat: chat)
    }

    /// Adds to `person`'s counts and reads them back (the row `inboxCounts(_:)` reads, or none
    /// when they have no row of counts: then `insertInboxCounts`). Their row is there once
    /// they had an item (fan-out writes it): updated in place, one statement, rather than an
    /// insert that first looks for a conflict.
    private func addToInboxCountsQuery(of person: UUID, unread: Int, unseen: Int) -> PostgresQuery {
        """
        UPDATE inbox_counts c SET unread = c.unread + \(unread), unseen = c.unseen + \(unseen)
        WHERE c.tenant_id = \(tenantID) AND c.person_id = \(person)
        RETURNING \(unseenInCounts: "c")::int, \(unreadInCounts: "c")::int, \(unreadChatOf: .value(person), tenant: "c.tenant_id")::int
        """
    }

    /// Adds to `person`'s counts where `addToInboxCountsQuery` found no row, and reads them.
    private func insertInboxCounts(of person: UUID, unread: Int, unseen: Int) async throws -> InboxCounts {
        try await connection.query(
            """
            INSERT INTO inbox_counts AS c (tenant_id, person_id, unread, unseen) VALUES (\(tenantID), \(person), \(unread), \(unseen))
            ON CONFLICT (tenant_id, person_id) DO UPDATE SET unread = c.unread + excluded.unread, unseen = c.unseen + excluded.unseen
            """)
        return try await inboxCounts(of: person)
    }

    /// Changes `person`'s items: each as `InboxEngagement.apply` decides, all or nothing.
    /// - Throws: `InboxUnknownItems` when an id is no item of theirs (nothing is written);
    ///   `InputError` for an empty or too long batch, or a device that is not theirs.
    /// - Returns: what changed (also written to the live feed for their sockets and webhooks).
    public func markInbox(
        of person: UUID, _ change: InboxEngagement.Change, _ target: InboxTarget, device: UUID?, at: Date = Date()
    ) async throws -> InboxStatusChange {
        let rows: PostgresRows
        switch target {
        case .ids(let ids):
            guard !ids.isEmpty else { throw InputError("give at least one id", field: "ids") }
            guard ids.count <= InboxTarget.maxIDs else { throw InputError("at most \(InboxTarget.maxIDs) ids at once", field: "ids") }
            rows = try await lockedRows(
                "\(engagementRows: person, tenant: tenantID) AND \(inboxItem: "n") AND n.id = ANY(\(ids)::uuid[]) ORDER BY n.id FOR UPDATE OF n",
                of: person, device: device)
            let found = Set(try rows.map { try $0.decode(UUID.self, at: 0) })
            let unknown = ids.enumerated().filter { !found.contains($0.element) }.map { (index: $0.offset, id: $0.element) }
            guard unknown.isEmpty else { throw InboxUnknownItems(unknown: unknown) }
        case .before(let time):
            rows = try await lockedRows(
                "\(engagementRows: person, tenant: tenantID) AND \(inboxItem: "n") AND n.created_at <= \(time) ORDER BY n.id FOR UPDATE OF n",
                of: person, device: device)
        }
        return try await engage(person: person, rows, status: change.status, at: at, device: device, action: nil) { engagement in
            engagement.apply(change, at: at, device: device)
        }
    }

    /// The app reports `person` opened the push of notification `id` (a tap), with the
    /// action chosen from it if any: idempotent, and only for its recipient.
    /// - Throws: `StoreError.notFound` for a notification that is not theirs; `InputError`
    ///   for a device that is not theirs.
    public func reportOpened(_ id: UUID, by person: UUID, device: UUID?, action: ActivityAction?, at: Date = Date()) async throws
        -> InboxStatusChange
    {
        let rows = try await ownNotification(id, of: person, device: device)
        return try await engage(person: person, rows, status: .read, at: at, device: device, action: action?.rawValue) { engagement in
            engagement.opened(at: at, device: device, action: action?.rawValue)
        }
    }

    /// The app reports the push of notification `id` reached `person`'s device.
    public func reportDelivered(_ id: UUID, by person: UUID, device: UUID?, at: Date = Date()) async throws -> InboxStatusChange {
        let rows = try await ownNotification(id, of: person, device: device)
        return try await engage(person: person, rows, status: .read, at: at, device: device, action: nil) { engagement in
            engagement.delivered(at: at, device: device)
        }
    }

    private func ownNotification(_ id: UUID, of person: UUID, device: UUID?) async throws -> PostgresRows {
        let rows = try await lockedRows("\(engagementRows: person, tenant: tenantID) AND n.id = \(id) FOR UPDATE OF n", of: person, device: device)
        guard !rows.isEmpty else { throw StoreError(.notFound, "no notification \(id.lowercasedString) of yours") }
        return rows
    }

    /// The rows of `query` (an engagement's, locked for its change), and the check that
    /// `device`, when one is named, is `person`'s: one round trip.
    /// - Throws: `InputError` for a device that is not theirs.
    private func lockedRows(_ query: PostgresQuery, of person: UUID, device: UUID?) async throws -> PostgresRows {
        guard let device else { return try await connection.query(query) }
        let results = try await connection.query([
            "SELECT 1 FROM devices WHERE tenant_id = \(tenantID) AND id = \(device) AND person_id = \(person) AND removed_at IS NULL", query
        ])
        guard !results[0].isEmpty else { throw InputError("no device \(device.lowercasedString) of yours", field: "device") }
        return results[1]
    }

    /// Applies `step` to each row's engagement, writes those that changed, and tells the live
    /// feed (the person's sockets; the webhooks) of what changed and happened.
    private func engage(
        person: UUID, _ rows: PostgresRows, status: InboxEngagement.Status, at: Date, device: UUID?, action: String?,
        _ step: (inout InboxEngagement) -> [InboxEngagement.Event]
    ) async throws -> InboxStatusChange {
        var changedItems: [UUID] = []
        var written: [(UUID, InboxEngagement)] = []
        var (unread, unseen) = (0, 0)
        var happened: [InboxStatusChange.Happened] = []
        for row in rows {
            let (id, kind, app, activity, conversation, isItem) = try row.decode((UUID, String, String, UUID?, UUID?, Bool).self)
            var engagement = try Self.engagement(row, from: 6)
            let before = engagement
            let events = step(&engagement)
            guard engagement != before else { continue }
            written.append((id, engagement))
            if isItem {
                // Only what a list shows is a change of status (an arrival or an action alone is not).
                if !engagement.listsAs(before) { changedItems.append(id) }
                unread += (engagement.isUnread ? 1 : 0) - (before.isUnread ? 1 : 0)
                unseen += (engagement.isCountedUnseen ? 1 : 0) - (before.isCountedUnseen ? 1 : 0)
            }
            if !events.isEmpty {
                happened.append(
                    .init(
                        notificationID: id, event: kind, app: try Self.decodeEnum(app), activityID: activity, conversationID: conversation,
                        events: events))
            }
        }
        // The write goes with the counts' statement, and with the look for the person's other
        // devices when they read something: one round trip for the three.
        if !written.isEmpty { writeEngagement(written) }
        let changesCounts = unread != 0 || unseen != 0
        let results = try await connection.query(
            [changesCounts ? addToInboxCountsQuery(of: person, unread: unread, unseen: unseen) : inboxCountsQuery(of: person)]
                + (unread < 0 ? [otherBadgedDevices(of: person, except: device)] : []))
        let counts: InboxCounts
        if let row = results[0].first {
            counts = try Self.inboxCounts(row)
        } else {
            counts = try await insertInboxCounts(of: person, unread: unread, unseen: unseen)
        }
        // Read on one device: the others' badges fall too (docs/inbox.md#one-badge).
        if results.count > 1, !results[1].isEmpty { try await scheduleBadgeUpdate(person: person, badge: counts.badge, except: device) }
        let change = InboxStatusChange(
            recipientID: person, ids: changedItems, status: status, at: at, device: device, action: action, happened: happened,
            badge: counts.badge)
        if !change.isEmpty { try await appendLive(.inboxStatus, .person(person), payload: change) }
        return change
    }

    /// Writes the engagement of `items` in one statement, sent with the transaction's next
    /// call (`PostgresConnection.enqueue`). A few items (an opening names one)
    /// are written on a plan made once a connection, on the indexes, for the rest of the
    /// transaction too (the counts and the live row after it are found by key): PostgreSQL's
    /// own choice planned it at every opening, every week's partition again, 0.6 ms of
    /// planning for 0.3 of work. Many (everything read at once) are planned for their number:
    /// the kept plan assumes ten. The ids are named in the condition too (`engagementOf`).
    private func writeEngagement(_ items: [(UUID, InboxEngagement)]) {
        connection.deferScript(
            items.count <= Self.engagementPlannedOnce ? Store.plannedOnceOnIndexes : "SET LOCAL plan_cache_mode = force_custom_plan")
        connection.enqueue(
            """
            UPDATE notifications n
            SET seen_at = e.seen_at, seen_device = e.seen_device, read_at = e.read_at, read_device = e.read_device,
                interacted_at = e.interacted_at, interacted_device = e.interacted_device, interacted_action = e.interacted_action,
                archived_at = e.archived_at, archived_device = e.archived_device, opened_at = e.opened_at, opened_device = e.opened_device,
                delivered_at = e.delivered_at, delivered_device = e.delivered_device
            FROM \(engagementOf: items, tenant: tenantID)
            """)
    }

    /// A notification's engagement from 13 columns of `row` starting at `first`, in the order
    /// of `engagementColumns`.
    static func engagement(_ row: PostgresRow, from first: Int) throws -> InboxEngagement {
        func mark(_ at: Int) throws -> InboxEngagement.Mark? {
            try row.decode(Date?.self, at: first + at).map { InboxEngagement.Mark(at: $0, device: try row.decode(UUID?.self, at: first + at + 1)) }
        }
        return InboxEngagement(
            seen: try mark(0), read: try mark(2), interacted: try mark(4), action: try row.decode(String?.self, at: first + 6),
            archived: try mark(7), opened: try mark(9), delivered: try mark(11))
    }

    /// How many items at most `writeEngagement` writes on the plan it keeps a connection.
    static let engagementPlannedOnce = 50

    /// The columns `engagement(_:from:)` reads, of a notification `n`.
    static let engagementColumns = """
        n.seen_at, n.seen_device, n.read_at, n.read_device, n.interacted_at, n.interacted_device, n.interacted_action,
        n.archived_at, n.archived_device, n.opened_at, n.opened_device, n.delivered_at, n.delivered_device
        """

    static func inboxItem(_ row: PostgresRow, person: Person) throws -> InboxItem {
        let (id, kind, app, title, body, priority, activityID, createdAt, digestID) =
            try row.decode((UUID, String, String, String, String, String?, UUID, Date, UUID?).self)
        let engagement = try engagement(row, from: 9)
        let (name, status, activityPriority, version, assignee, role) = (
            try row.decode(String?.self, at: 22), try row.decode(String?.self, at: 23), try row.decode(String?.self, at: 24),
            try row.decode(Int?.self, at: 25), try row.decode(UUID?.self, at: 26), try row.decode(String?.self, at: 27)
        )
        var now: InboxItem.ActivityNow?
        var actions: [ActivityAction] = []
        if let name, let status, let activityPriority, let version, let assignee {
            let status: ActivityStatus = try decodeEnum(status)
            now = .init(id: activityID, name: name, status: status, priority: try decodeEnum(activityPriority), version: version)
            actions = ActivityStateMachine.actions(
                from: status,
                by: .init(policy: AccessPolicy(person), isAssignee: assignee == person.id, role: try role.map { try decodeEnum($0) }))
        }
        return InboxItem(
            id: id, event: kind, app: try decodeEnum(app), title: title, body: body, priority: priority.flatMap(Priority.init(rawValue:)),
            activityID: activityID, activity: now, actions: actions, createdAt: createdAt, digestID: digestID, engagement: engagement)
    }
}

extension PostgresQuery.StringInterpolation {
    /// The engagement `items` are given, as the relation `e` of `TenantSession.writeEngagement`
    /// and its condition on the notifications `n` of `tenant`. One item (an opening, a push
    /// delivered) is one row of values and its id one value: no array is written out and read
    /// back, and the plan kept a connection starts only the week (partition) that holds it. More
    /// are arrays unnested, their ids named as a list too: the join alone cannot tell which
    /// weeks hold them, and looked in each.
    fileprivate mutating func appendInterpolation(engagementOf items: [(UUID, InboxEngagement)], tenant: UUID) {
        let marks: [(name: String, mark: KeyPath<InboxEngagement, InboxEngagement.Mark?>)] = [
            ("seen", \.seen), ("read", \.read), ("interacted", \.interacted), ("archived", \.archived), ("opened", \.opened),
            ("delivered", \.delivered)
        ]
        let single = items.count == 1 ? items.first : nil
        if let (id, engagement) = single {
            appendLiteral("(VALUES (")
            appendInterpolation(id)
            appendLiteral("::uuid")
            for (_, mark) in marks {
                appendLiteral(", ")
                appendInterpolation(engagement[keyPath: mark]?.at)
                appendLiteral("::timestamptz, ")
                appendInterpolation(engagement[keyPath: mark]?.device)
                appendLiteral("::uuid")
            }
            appendLiteral(", ")
            appendInterpolation(engagement.action)
            appendLiteral("::text))")
        } else {
            appendLiteral("unnest(")
            appendInterpolation(items.map(\.0))
            appendLiteral("::uuid[]")
            for (_, mark) in marks {
                appendLiteral(", ")
                appendInterpolation(items.map { $0.1[keyPath: mark]?.at })
                appendLiteral("::timestamptz[], ")
                appendInterpolation(items.map { $0.1[keyPath: mark]?.device })
                appendLiteral("::uuid[]")
            }
            appendLiteral(", ")
            appendInterpolation(items.map(\.1.action))
            appendLiteral("::text[])")
        }
        appendLiteral(" AS e(id")
        for (name, _) in marks { appendLiteral(", \(name)_at, \(name)_device") }
        appendLiteral(", interacted_action) WHERE n.tenant_id = ")
        appendInterpolation(tenant)
        appendLiteral(" AND n.id = e.id AND n.id")
        if let (id, _) = single {
            appendLiteral(" = ")
            appendInterpolation(id)
        } else {
            appendLiteral(" = ANY(")
            appendInterpolation(items.map(\.0))
            appendLiteral("::uuid[])")
        }
    }

    /// The items of `person` with the activity each is about as `policy` may see it now (and
    /// their role in its team), in the columns `TenantSession.inboxItem` reads; the caller adds
    /// ` AND …` conditions, an order and a limit.
    fileprivate mutating func appendInterpolation(inboxItems person: Person, tenant: UUID, policy: AccessPolicy) {
        appendLiteral(
            """
            SELECT n.id, n.kind, n.app, n.title, n.body, n.data->>'priority', n.activity_id, n.created_at, n.digest_id,\u{20}
            """)
        appendLiteral(TenantSession.engagementColumns)
        appendLiteral(
            """
            , a.name, a.status, a.priority, a.version, a.assignee_id,
                   (SELECT m.role FROM team_members m WHERE m.tenant_id = a.tenant_id AND m.team_id = a.team_id AND m.person_id =\u{20}
            """)
        appendInterpolation(person.id)
        appendLiteral(
            """
            )
            FROM notifications n
            LEFT JOIN activities a ON a.tenant_id = n.tenant_id AND a.id = n.activity_id AND\u{20}
            """)
        appendInterpolation(activityVisibleTo: policy)
        appendLiteral(" WHERE n.tenant_id = ")
        appendInterpolation(tenant)
        appendLiteral(" AND n.recipient_id = ")
        appendInterpolation(person.id)
        appendLiteral(" AND ")
        appendInterpolation(inboxItem: "n")
    }

    /// A notification `n` of `person`'s: id, kind, app, activity, conversation, whether it is an
    /// inbox item, then the engagement columns; the caller adds ` AND …` conditions.
    fileprivate mutating func appendInterpolation(engagementRows person: UUID, tenant: UUID) {
        appendLiteral("SELECT n.id, n.kind, n.app, n.activity_id, n.conversation_id, ")
        appendInterpolation(inboxItem: "n")
        appendLiteral(", ")
        appendLiteral(TenantSession.engagementColumns)
        appendLiteral(" FROM notifications n WHERE n.tenant_id = ")
        appendInterpolation(tenant)
        appendLiteral(" AND n.recipient_id = ")
        appendInterpolation(person)
    }
}
