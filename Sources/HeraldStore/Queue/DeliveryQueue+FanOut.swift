import Foundation
import HeraldCore
import HeraldPostgres

extension DeliveryQueue {
    /// The events that change an activity's status: the ones that supersede earlier pushes.
    static let statusChanges = EventKind.allCases.filter(\.isStatusChange).map(\.rawValue)

    /// The recipients' locale, time zone and badge, in the tenant's scope; and of
    /// `liveActivityPeople` (a P0's assignee and manager) whether they have any Live Activity
    /// token (`RecipientProfile.followsLiveActivities`).
    static func profiles(
        _ recipients: [EventRecipient], liveActivityPeople: [EventRecipient] = [], tenant: UUID, on connection: PostgresConnection
    ) async throws -> [Key: RecipientProfile] {
        let everyone = recipients + liveActivityPeople
        guard !everyone.isEmpty else { return [:] }
        let asked = Array(repeating: false, count: recipients.count) + Array(repeating: true, count: liveActivityPeople.count)
        let rows = try await connection.query(
            """
            SELECT r.id, r.app, p.locale, p.time_zone,
                   -- The badge before this event's notifications (docs/inbox.md#the-badge).
                   \(unreadItemsOf: .column("r.id"), tenant: "p.tenant_id")::int + \(unreadChatOf: .column("r.id"), tenant: "p.tenant_id")::int,
                   ARRAY(SELECT CASE WHEN np.person_id IS NULL THEN 'tenant:' ELSE 'own:' END || np.event || '=' || np.app || '=' || np.mode
                         FROM notification_preferences np
                         WHERE np.tenant_id = p.tenant_id AND np.app = r.app AND (np.person_id = r.id OR np.person_id IS NULL)),
                   to_char(q.starts_at, 'HH24:MI'), to_char(q.ends_at, 'HH24:MI'), q.days,
                   r.live AND EXISTS (
                       SELECT FROM devices d
                       WHERE d.tenant_id = p.tenant_id AND d.person_id = r.id AND d.app = r.app AND d.kind IN ('liveactivity', 'liveactivity_update')
                         AND d.removed_at IS NULL AND d.deactivated_at IS NULL),
                   p.digest_window,
                   -- The channels they chose (docs/notifications.md#email), `event=channel`.
                   ARRAY(SELECT c.event || '=' || c.channel FROM notification_channels c
                         WHERE c.tenant_id = p.tenant_id AND c.person_id = r.id AND c.app = r.app),
                   p.digest_channel = 'email'
            FROM (SELECT u.id, u.app, bool_or(u.live) AS live
                  FROM unnest(\(everyone.map(\.id))::uuid[], \(everyone.map(\.app.rawValue))::text[], \(asked)::bool[]) AS u(id, app, live)
                  GROUP BY u.id, u.app) r
            JOIN people p ON p.tenant_id = \(tenant) AND p.id = r.id
            LEFT JOIN quiet_hours q ON q.tenant_id = p.tenant_id AND q.person_id = p.id
            """)
        var result: [Key: RecipientProfile] = [:]
        result.reserveCapacity(rows.count)
        for row in rows {
            let (id, app, locale, timeZone, badge, preferences, starts, ends, days) =
                try row.decode((UUID, String, String, String, Int, [String], String?, String?, String?).self)
            guard let app = AppKind(rawValue: app) else { continue }
            var profile = RecipientProfile(id: id, app: app, locale: locale, timeZone: timeZone, badge: badge)
            if !preferences.isEmpty { profile.preferences = NotificationPreferences(entries: preferences) }
            if let starts, let ends, let days { profile.quietHours = try? QuietHours.parse("\(starts)-\(ends)", days: days) }
            profile.followsLiveActivities = try row.decode(Bool.self, at: 9)
            profile.digestWindow = (try? DigestWindow.parse(try row.decode(String.self, at: 10))) ?? .default
            profile.digestByEmail = try row.decode(Bool.self, at: 12)
            for entry in try row.decode([String].self, at: 11) {
                let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2, let event = EventKind(rawValue: parts[0]), let channel = NotificationChannel(rawValue: parts[1]) {
                    profile.channels[event] = channel
                }
            }
            result[Key(id: id, app: app)] = profile
        }
        return result
    }

    public struct Key: Hashable, Sendable {
        public let id: UUID
        public let app: AppKind

        public init(id: UUID, app: AppKind) {
            self.id = id
            self.app = app
        }
    }

    public struct ParticipantKey: Hashable, Sendable {
        public let conversation: UUID
        public let person: UUID

        public init(conversation: UUID, person: UUID) {
            self.conversation = conversation
            self.person = person
        }
    }

    /// Muted and viewing, for the current participants of these conversations (only for
    /// `people`, when given).
    static func participantStates(
        _ conversations: [UUID], people: [UUID]? = nil, tenant: UUID, on connection: PostgresConnection
    ) async throws -> [ParticipantKey: ParticipantState] {
        guard !conversations.isEmpty else { return [:] }
        // Two statements, not one with `(all OR person_id = ANY(…))`: planned once for any
        // values (a small fan-out's generic plan), that condition cannot reach the index, and
        // the first part of a message to 10,000 people read all 10,000 participants, each
        // against the part's 100 (85 ms before its first request).
        let rows = try await connection.query(
            people.map { people in
                """
                SELECT conversation_id, person_id, muted, coalesce(viewing_until > now(), false), push_mode
                FROM conversation_participants
                WHERE tenant_id = \(tenant) AND conversation_id = ANY(\(conversations)) AND person_id = ANY(\(people)) AND left_at IS NULL
                """
            } ?? """
                SELECT conversation_id, person_id, muted, coalesce(viewing_until > now(), false), push_mode
                FROM conversation_participants
                WHERE tenant_id = \(tenant) AND conversation_id = ANY(\(conversations)) AND left_at IS NULL
                """)
        var result: [ParticipantKey: ParticipantState] = [:]
        result.reserveCapacity(rows.count)
        for row in rows {
            let (conversation, person, muted, viewing, mode) = try row.decode((UUID, UUID, Bool, Bool, String?).self)
            result[ParticipantKey(conversation: conversation, person: person)] = ParticipantState(
                muted: muted, viewing: viewing, mode: mode.flatMap(PushMode.init(rawValue:)))
        }
        return result
    }

    /// How many messages of each conversation quiet hours hold back now for each of
    /// `people`, added to `states` (one query, and none when nobody has quiet hours).
    static func addDeferred(
        to states: inout [ParticipantKey: ParticipantState], people: [UUID], tenant: UUID, on connection: PostgresConnection
    ) async throws {
        guard !people.isEmpty, !states.isEmpty else { return }
        let conversations = Array(Set(states.keys.map(\.conversation)))
        let rows = try await connection.query(
            """
            SELECT conversation_id, recipient_id, count(*)::int FROM notifications
            WHERE tenant_id = \(tenant) AND recipient_id = ANY(\(people)) AND conversation_id = ANY(\(conversations))
              AND decision = 'quiet_hours' AND deferred_until > now()
            GROUP BY 1, 2
            """)
        for row in rows {
            let (conversation, person, count) = try row.decode((UUID, UUID, Int).self)
            states[ParticipantKey(conversation: conversation, person: person)]?.deferred = count
        }
    }

    /// Deliveries fan-out may lease to its own worker as it creates them.
    struct FanOutClaim {
        let worker: String
        let lease: Duration
        /// At most this many.
        let room: Int
        /// Providers this worker holds back (`SendGate`): their deliveries are only queued.
        let paused: [PushProvider]
        /// The lease's id (`delivery_leases`): one for what the statement leases.
        var leaseID = UUID()
    }

    /// Writes the notifications and their deliveries (one per active device of the
    /// recipient's app) and marks the events fanned out, in the tenant's scope, in one
    /// statement. With `claim`, up to `claim.room` of the new deliveries are leased to that
    /// worker at once (first attempt started) and returned ready to send; the rest are
    /// queued. Idempotent: a notification's id is made from its event and recipient, and a
    /// delivery's from its notification and device (in the event's time: see
    /// `sql/0018_history_partitions.sql`), so one that exists already is left alone.
    /// - Returns: how many deliveries were created, and the ones leased to the worker.
    static func write(
        _ drafts: [NotificationDraft], events: [UUID], tenant: UUID, deadline: Duration, claim: FanOutClaim?,
        freshness: DeviceFreshness = .default, outboxFloor: Int64 = 0, on connection: PostgresConnection
    ) async throws -> (created: Int, claimed: [ClaimedDelivery]) {
        let rows = try await connection.query(
            writeStatement(
                drafts, events: events, tenant: tenant, deadline: deadline, claim: claim, freshness: freshness, outboxFloor: outboxFloor))
        var created = 0
        var claimed: [ClaimedDelivery] = []
        // A notification is one event to one recipient (its id is made from the two). Only
        // made when something was leased (the one row is the count otherwise: the middle
        // parts of a large event lease nothing).
        var draftIndex: [DraftKey: Int] = [:]
        if rows.count > 1 {
            draftIndex = Dictionary(drafts.enumerated().map { (DraftKey(event: $1.eventID, recipient: $1.recipientID), $0) }) { first, _ in first }
        }
        for row in rows {
            if let count = try row.decode(Int?.self, at: 8) {
                created = count
                continue
            }
            let (id, eventID, recipientID, deviceID, provider, deadlineAt, token, now) =
                try row.decode((UUID, UUID, UUID, UUID, String, Date, String, Date).self)
            guard let index = draftIndex[DraftKey(event: eventID, recipient: recipientID)],
                let provider = PushProvider(rawValue: provider), let claim
            else { continue }
            let draft = drafts[index]
            claimed.append(
                ClaimedDelivery(
                    tenantID: tenant, id: id, notificationID: try row.decode(UUID.self, at: 9), deviceID: deviceID, provider: provider,
                    app: draft.app, attempt: 1,
                    firstAttemptAt: now, deadlineAt: deadlineAt, token: token,
                    address: DeviceAddress(rawValue: try row.decode(String.self, at: 10)) ?? .token, deviceActive: true,
                    content: draft.content.sent(as: try row.decode(UUID.self, at: 9)),
                    eventAt: draft.eventAt, claimedAt: now,
                    subscription: subscription(
                        endpoint: token, p256dh: try row.decode(String?.self, at: 11), auth: try row.decode(String?.self, at: 12)),
                    leaseID: claim.leaseID))
        }
        return (created, claimed)
    }

    private struct DraftKey: Hashable {
        let event: UUID
        let recipient: UUID
    }
}

extension PostgresQuery.StringInterpolation {
    /// Supersede's rule, written once (docs/notifications.md#superseded-pushes): the kind of the
    /// first change of status of the activity after the event `event` (a column of the
    /// statement), or NULL when it has not moved on since. The event by its key, then the
    /// activity's later events on their index: a LATERAL with its own LIMIT cannot be turned
    /// around (planned as a join, the tenant's whole outbox was read for every draft, minutes
    /// for a fan-out of 15,000 assignments).
    mutating func appendInterpolation(laterStatusChangeOf event: String, tenant: UUID) {
        appendLiteral(
            """
            SELECT o.kind FROM outbox e
            CROSS JOIN LATERAL (
                SELECT o.kind FROM outbox o
                WHERE o.tenant_id = e.tenant_id AND o.activity_id = e.activity_id AND o.seq > e.seq
                  AND o.kind = ANY(
            """)
        appendInterpolation(DeliveryQueue.statusChanges)
        appendLiteral("::text[])\n    ORDER BY o.seq LIMIT 1) o\nWHERE e.tenant_id = ")
        appendInterpolation(tenant)
        appendLiteral(" AND e.id = \(event)")
    }
}
