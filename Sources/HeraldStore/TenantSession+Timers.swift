import Foundation
import HeraldCore
import HeraldPostgres

/// A timer as history shows it.
public struct ActivityTimerRecord: Sendable, Equatable, Codable {
    public let id: UUID
    public let kind: TimerKind
    public let dueAt: Date
    public let status: TimerStatus
    public let reason: String?
    public let eventID: UUID?
    public let settledAt: Date?

    /// JSON names: identifiers end in `Id` and addresses in `Url`, as everywhere in the API.
    enum CodingKeys: String, CodingKey {
        case id
        case kind
        case dueAt
        case status
        case reason
        case eventID = "eventId"
        case settledAt
    }
}

/// What firing one timer did.
public enum TimerFiring: Sendable, Equatable {
    /// Its event was appended to the outbox.
    case fired(TimerKind, event: UUID)
    /// The activity no longer waited for it.
    case skipped(TimerKind, reason: String)
    /// Another worker holds it, or it was settled or moved meanwhile: nothing done.
    case notDue
    /// It could not be decided yet (what it waits on is still to be written): due again shortly.
    case postponed(TimerKind)
}

extension TenantSession {
    /// Fires the timer `id` if it is pending and due at `now`, in this session's transaction:
    /// locks it (`SKIP LOCKED`: a timer another worker is firing is left to it), reads its
    /// activity again, and either appends the timer's event or writes why it was skipped.
    func fireTimer(_ id: UUID, now: Date) async throws -> TimerFiring {
        let rows = try await connection.query(
            """
            SELECT \(unsafeRaw: Self.activityColumns),
                   tm.kind AS timer_kind, tm.period AS timer_period, tm.waiting_since AS timer_since, s.time_zone AS assignee_zone
            FROM activity_timers tm JOIN \(unsafeRaw: Self.activityTables) ON a.tenant_id = tm.tenant_id AND a.id = tm.activity_id
            WHERE tm.tenant_id = \(tenantID) AND tm.id = \(id) AND tm.status = 'pending' AND tm.due_at <= \(now)
            FOR UPDATE OF tm SKIP LOCKED
            """)
        guard let row = rows.first else { return .notDue }
        let kind: TimerKind = try Self.decodeEnum(try row.decode(String.self, column: "timer_kind"))
        let period = try row.decode(Int.self, column: "timer_period")
        let since = try row.decode(Date.self, column: "timer_since")
        let zone = try row.decode(String.self, column: "assignee_zone")
        let activity = try Self.activity(row)
        // An `unopened` timer waits on one item: the late person's notification of the event
        // that asked them to act, made when the wait began (not looked for once it moved on).
        let awaited = kind == .unopened && activity.version == period ? ActivityTimers.openingAwaited(in: activity.status) : nil
        let late = awaited.map { $0.audience == .assignee ? activity.assignee : activity.manager }
        var item = ActivityTimers.AwaitedItem.absent
        if let awaited, let late {
            item = try await awaitedItem(of: awaited.event, activity: activity.id, person: late.id, since: since)
        }
        let subject = ActivityTimers.Subject(
            status: activity.status, version: activity.version, deadline: activity.deadline, timeZone: TimeZone.named(zone),
            awaitedItem: item)
        switch ActivityTimers.decide(kind, period: period, activity: subject, now: now) {
        case .later:
            try await connection.query(
                """
                UPDATE activity_timers SET due_at = \(now.addingTimeInterval(ActivityTimers.undecidedDelay))
                WHERE tenant_id = \(tenantID) AND id = \(id)
                """)
            return .postponed(kind)
        case .skip(let reason):
            try await connection.query(
                """
                UPDATE activity_timers SET status = 'skipped', reason = \(reason), settled_at = now()
                WHERE tenant_id = \(tenantID) AND id = \(id)
                """)
            return .skipped(kind, reason: reason)
        case .fire:
            let admins: [UUID] =
                kind == .escalation || awaited?.audience == .manager
                ? try await connection.query("SELECT id FROM people WHERE tenant_id = \(tenantID) AND is_admin ORDER BY created_at, id")
                    .map { try $0.decode(UUID.self, at: 0) }
                : []
            let recipients = Routing.timer(
                kind, waiting: activity.status, manager: activity.manager.id, assignee: activity.assignee.id, admins: admins)
            // The person it chases acts by not acting: an item not opened is theirs.
            let actor = late ?? activity.assignee
            let payload = ActivityEventPayload(
                event: kind.event, activityID: activity.id, teamID: activity.team.id, teamName: activity.team.name,
                activityName: activity.name, priority: activity.priority, deadline: activity.deadline, status: activity.status,
                actor: actor, manager: activity.manager, assignee: activity.assignee, recipients: recipients, reason: nil,
                occurredAt: now, waitingSince: since, version: activity.version)
            let event = try await appendToOutbox(
                kind.event, about: .activity(activity.id), actor: actor.id, recipients: recipients.map(\.id),
                payload: payload, at: now)
            // No socket is told of a timer's event; the tenant's webhooks are.
            try await appendLive(.activity, .webhooksOnly, payload: LiveActivityChange(event: kind.event, activity: activity))
            try await connection.query(
                """
                UPDATE activity_timers SET status = 'fired', event_id = \(event), settled_at = now()
                WHERE tenant_id = \(tenantID) AND id = \(id)
                """)
            return .fired(kind, event: event)
        }
    }

    /// What became of `person`'s item of the `event` that began the wait at `since` on
    /// `activity` (`ActivityTimers.AwaitedItem`).
    private func awaitedItem(of event: EventKind, activity: UUID, person: UUID, since: Date) async throws -> ActivityTimers.AwaitedItem {
        let earliest = since.addingTimeInterval(-0.001)
        let row = try await connection.query(
            """
            SELECT n.read_at, n.archived_at, n.id IS NOT NULL,
                   EXISTS (SELECT FROM outbox o WHERE o.tenant_id = \(tenantID) AND o.activity_id = \(activity) AND o.kind = \(event.rawValue)
                             AND o.occurred_at >= \(earliest) AND o.fanned_out_at IS NULL AND o.passed_over_at IS NULL)
            FROM (VALUES (1)) AS one(x) LEFT JOIN LATERAL (
                SELECT n.id, n.read_at, n.archived_at FROM notifications n
                WHERE n.tenant_id = \(tenantID) AND n.activity_id = \(activity) AND n.recipient_id = \(person) AND n.kind = \(event.rawValue)
                  AND n.event_at >= \(earliest) AND \(inboxItem: "n")
                ORDER BY n.event_at DESC LIMIT 1
            ) n ON true
            """
        ).single()
        let (read, archived, found, unwritten) = try row.decode((Date?, Date?, Bool, Bool).self)
        guard found else { return unwritten ? .notYetWritten : .absent }
        if let read { return .read(at: read) }
        if let archived { return .archived(at: archived) }
        return .unread
    }

    /// The timers of an activity, by due time.
    public func timers(activity id: UUID) async throws -> [ActivityTimerRecord] {
        try await connection.query(
            """
            SELECT id, kind, due_at, status, reason, event_id, settled_at FROM activity_timers
            WHERE tenant_id = \(tenantID) AND activity_id = \(id) ORDER BY due_at, id
            """
        ).map { row in
            let (id, kind, due, status, reason, event, settled) = try row.decode((UUID, String, Date, String, String?, UUID?, Date?).self)
            return ActivityTimerRecord(
                id: id, kind: try Self.decodeEnum(kind), dueAt: due, status: try Self.decodeEnum(status), reason: reason, eventID: event,
                settledAt: settled)
        }
    }
}
