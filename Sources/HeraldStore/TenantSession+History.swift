import Foundation
import HeraldCore
import HeraldPostgres

/// What `herald history` may filter by (docs/cli.md).
public struct HistoryFilter: Sendable {
    public var recipient: String?
    public var activity: String?
    public var conversation: String?
    public var event: String?
    public var status: String?
    public var since: Date?
    public var limit: Int
    /// Only notifications older than this one (the last of the page before), newest first.
    public var after: PageCursor?
    /// Only the notifications of this event (`herald why`).
    public var eventID: UUID?
    /// Only this digest: the notifications it gathered, and its own push.
    public var digest: String?

    public init(
        recipient: String? = nil, activity: String? = nil, conversation: String? = nil, event: String? = nil, status: String? = nil,
        since: Date? = nil, limit: Int = 100, after: PageCursor? = nil, digest: String? = nil
    ) {
        self.after = after
        self.digest = digest
        self.recipient = recipient
        self.activity = activity
        self.conversation = conversation
        self.event = event
        self.status = status
        self.since = since
        self.limit = limit
    }

    /// A notification's status as history reports it.
    public static let statuses = [
        "sent", "pending", "no_device", "suppressed", "digested", "dead_token", "failed", "expired", "cancelled", "unanswered"
    ]
}

/// One notification: who, what, and what became of it.
public struct HistoryEntry: Sendable, Codable, Equatable {
    public let id: UUID
    public let event: String
    public let eventID: UUID
    public let recipient: PersonReference
    public let app: AppKind
    public let title: String
    public let body: String
    /// `sent` (at least one device accepted it), `pending`, `no_device`, `suppressed`,
    /// `digested` (in a digest: `digestID`), `dead_token`, `failed`, `expired`, `cancelled` or
    /// `unanswered` (sent twice with no answer: docs/notifications.md#delivery).
    public let status: String
    /// Why it was not sent (or not to every device), when there is a reason.
    public let reason: String?
    public let devices: Int
    public let devicesSent: Int
    public let activityID: UUID?
    public let conversationID: UUID?
    public let eventAt: Date
    public let createdAt: Date
    /// When the first device accepted it.
    public let sentAt: Date?
    /// What fan-out decided for this recipient (`send`, `muted`, `preference_off`, `viewing`,
    /// `quiet_hours`, `no_device`, `superseded`); nil for notifications older than decisions.
    public let decision: NotificationDecision?
    /// Quiet hours: when its pushes were (or are) due.
    public let deferredUntil: Date?
    /// The digest it was gathered into (docs/notifications.md); a digest's own notification has
    /// the digest's id as its `eventID`.
    public let digestID: UUID?
    /// True when the viewer may see that it was sent but not read what it said (a message in a
    /// conversation they are not in: `AccessPolicy.mayReadWords`): `title` and `body` then
    /// say only that.
    public let wordsWithheld: Bool
    /// What its recipient did with it, after its delivery (docs/inbox.md): seen, read,
    /// opened, interacted with (and the action), archived, and whether the app said the push
    /// arrived; each with its time and device. A trace, shown to whoever may see the
    /// notification.
    public let engagement: InboxEngagement

    /// JSON names: identifiers end in `Id` and addresses in `Url`, as everywhere in the API.
    enum CodingKeys: String, CodingKey {
        case id
        case event
        case eventID = "eventId"
        case recipient
        case app
        case title
        case body
        case status
        case reason
        case devices
        case devicesSent
        case activityID = "activityId"
        case conversationID = "conversationId"
        case eventAt
        case createdAt
        case sentAt
        case decision
        case deferredUntil
        case digestID = "digestId"
        case wordsWithheld
        case engagement
    }
}

/// One attempt at one delivery.
public struct DeliveryAttemptRecord: Sendable, Codable, Equatable {
    public let attempt: Int
    public let worker: String
    public let startedAt: Date
    public let finishedAt: Date
    public let durationMilliseconds: Int
    public let outcome: String
    public let httpStatus: Int?
    public let providerError: String?
    public let messageID: String?
    public let nextAttemptAt: Date?
    /// False when the worker had lost its lease by the time it recorded this attempt.
    public let counted: Bool

    /// JSON names: identifiers end in `Id` and addresses in `Url`, as everywhere in the API.
    enum CodingKeys: String, CodingKey {
        case attempt
        case worker
        case startedAt
        case finishedAt
        case durationMilliseconds
        case outcome
        case httpStatus
        case providerError
        case messageID = "messageId"
        case nextAttemptAt
        case counted
    }
}

/// One device a notification went (or was to go) to.
public struct DeliveryRecord: Sendable, Codable, Equatable {
    public let id: UUID
    public let deviceID: UUID
    public let tokenPreview: String
    /// `token` or `fid`: what `tokenPreview` shortens.
    public let address: String
    public let platform: String
    public let provider: String
    public let deviceState: String
    public let status: String
    public let attemptCount: Int
    public let dueAt: Date
    public let deadlineAt: Date
    public let sentAt: Date?
    public let messageID: String?
    public let httpStatus: Int?
    public let lastError: String?
    public let attempts: [DeliveryAttemptRecord]

    /// JSON names: identifiers end in `Id` and addresses in `Url`, as everywhere in the API.
    enum CodingKeys: String, CodingKey {
        case id
        case deviceID = "deviceId"
        case tokenPreview
        case address
        case platform
        case provider
        case deviceState
        case status
        case attemptCount
        case dueAt
        case deadlineAt
        case sentAt
        case messageID = "messageId"
        case httpStatus
        case lastError
        case attempts
    }
}

/// Everything about one notification (`herald history show`).
public struct HistoryDetail: Sendable, Codable, Equatable {
    public let notification: HistoryEntry
    public let data: [String: String]
    public let badge: Int
    public let sound: Bool
    public let threadID: String
    public let imageURL: String?
    /// A Live Activity's push: its event, content state and dates (docs/apps.md).
    public let liveActivity: LiveActivityContent?
    public let deliveries: [DeliveryRecord]

    /// JSON names: identifiers end in `Id` and addresses in `Url`, as everywhere in the API.
    enum CodingKeys: String, CodingKey {
        case notification
        case data
        case badge
        case sound
        case threadID = "threadId"
        case imageURL = "imageUrl"
        case liveActivity
        case deliveries
    }
}

extension HistoryDetail {
    /// A device as history names it: by its delivery (`android …ab12`), or by the start of its
    /// id when none of the deliveries went to it (the app said which device it was on).
    public func deviceName(_ id: UUID) -> String {
        deliveries.first { $0.deviceID == id }.map { "\($0.platform) \($0.tokenPreview)" } ?? "device \(id.lowercasedString.prefix(8))"
    }
}

extension TenantSession {
    /// The notifications `viewer` may see, newest first: a tenant admin sees the whole
    /// tenant, a manager their teams' and their own, a member only their own.
    /// - Throws: `InputError`; `StoreError.notFound` for an unknown viewer or recipient.
    public func history(viewer email: String, filter: HistoryFilter) async throws -> [HistoryEntry] {
        try await history(viewer: try await person(email: email), filter: filter)
    }

    /// `history` for a person already read, or for the tenant itself (nil: everything, as
    /// for an admin).
    public func history(viewer: Person?, filter: HistoryFilter) async throws -> [HistoryEntry] {
        var recipient: UUID?
        if let email = filter.recipient { recipient = try await person(email: email).id }
        let activity = try filter.activity.map { try Input.id($0, field: "activity") }
        let conversation = try filter.conversation.map { try Input.id($0, field: "conversation") }
        // A digest's own notification is of the kind `digest`.
        let event = try filter.event.map { $0 == "digest" ? $0 : try Input.choice($0, field: "event", as: EventKind.self).rawValue }
        let digest = try filter.digest.map { try Input.id($0, field: "digest") }
        let status = try filter.status.map { value -> String in
            guard HistoryFilter.statuses.contains(value) else {
                throw InputError("status must be one of \(HistoryFilter.statuses.joined(separator: ", ")) (got \"\(value)\")")
            }
            return value
        }
        guard (1...10_000).contains(filter.limit) else { throw InputError("limit must be between 1 and 10000") }
        let rows = try await connection.query(
            """
            SELECT * FROM (\(historyOf: AccessPolicy(viewer))
                WHERE n.tenant_id = \(tenantID)
                  AND \(notificationVisibleTo: AccessPolicy(viewer))\(
                      and: "n.recipient_id =", recipient)\(and: "n.activity_id =", activity)\(and: "n.conversation_id =", conversation)\(
                      and: "n.kind =", event)\(and: "n.created_at >=", filter.since)\(and: "n.event_id =", filter.eventID)
                  AND (\(digest)::uuid IS NULL OR n.digest_id = \(digest) OR (n.kind = 'digest' AND n.event_id = \(digest)))
            ) h
            WHERE TRUE\(and: "h.status =", status)\(after: filter.after, in: "h")
            ORDER BY h.created_at DESC, h.id DESC
            \(limit: filter.limit)
            """)
        return try rows.map(Self.historyEntry)
    }

    /// One notification with its payload, deliveries and every attempt.
    /// - Throws: `StoreError.notFound` when there is none the viewer may see.
    public func historyDetail(viewer email: String, id: UUID) async throws -> HistoryDetail {
        try await historyDetail(viewer: try await person(email: email), id: id)
    }

    /// `historyDetail` for a person already read, or for the tenant itself (nil).
    public func historyDetail(viewer: Person?, id: UUID) async throws -> HistoryDetail {
        let rows = try await connection.query(
            """
            SELECT h.*, x.live::text, x.data::text, x.badge, x.sound, x.thread_id, CASE WHEN h.words_readable THEN x.image_url END
            FROM (\(historyOf: AccessPolicy(viewer)) WHERE n.tenant_id = \(tenantID) AND n.id = \(id) AND \(notificationVisibleTo: AccessPolicy(viewer))) h
            JOIN notifications x ON x.tenant_id = \(tenantID) AND x.id = h.id
            """)
        guard let row = rows.first else {
            throw StoreError(.notFound, "no notification \(id.lowercasedString) that \(viewer?.email ?? "the tenant") may see")
        }
        let entry = try Self.historyEntry(row)
        let width = row.columns.count
        let dataText = try row.decode(String.self, at: width - 5)
        let live = try row.decode(String?.self, at: width - 6).flatMap {
            try? JSONDecoder().decode(LiveActivityContent.self, from: Data($0.utf8))
        }
        let data = (try? JSONDecoder().decode([String: String].self, from: Data(dataText.utf8))) ?? [:]
        let (badge, sound, threadID, imageURL) = (
            try row.decode(Int.self, at: width - 4), try row.decode(Bool.self, at: width - 3),
            try row.decode(String.self, at: width - 2), try row.decode(String?.self, at: width - 1)
        )

        let attemptRows = try await connection.query(
            """
            SELECT a.delivery_id, a.attempt, a.worker, a.started_at, a.finished_at, a.outcome, a.http_status, a.provider_error,
                   a.message_id, a.next_attempt_at, a.counted
            FROM delivery_attempt_history a
            WHERE a.tenant_id = \(tenantID) AND a.notification_id = \(id)
            ORDER BY a.started_at, a.attempt
            """)
        var attempts: [UUID: [DeliveryAttemptRecord]] = [:]
        for row in attemptRows {
            let (deliveryID, attempt, worker, started, finished, outcome, http) =
                try row.decode((UUID, Int, String, Date, Date, String, Int?).self)
            let (providerError, messageID, next, counted) = (
                try row.decode(String?.self, at: 7), try row.decode(String?.self, at: 8), try row.decode(Date?.self, at: 9),
                try row.decode(Bool.self, at: 10)
            )
            attempts[deliveryID, default: []].append(
                DeliveryAttemptRecord(
                    attempt: attempt, worker: worker, startedAt: started, finishedAt: finished,
                    durationMilliseconds: Int((finished.timeIntervalSince(started) * 1000).rounded()), outcome: outcome,
                    httpStatus: http, providerError: providerError, messageID: messageID, nextAttemptAt: next, counted: counted))
        }
        let deliveryRows = try await connection.query(
            """
            SELECT d.id, d.device_id, v.token, v.platform, d.provider,
                   CASE WHEN v.deactivated_at IS NOT NULL THEN 'deactivated' WHEN v.removed_at IS NOT NULL THEN 'removed'
                        WHEN v.last_seen_at <= now() - make_interval(secs => \(freshness.staleAfter.timeInterval)) THEN 'stale'
                        ELSE 'active' END,
                   d.status, d.attempts, d.due_at, d.deadline_at, d.sent_at, d.message_id, d.http_status, d.last_error, v.address
            FROM deliveries d JOIN devices v ON v.tenant_id = d.tenant_id AND v.id = d.device_id
            WHERE d.tenant_id = \(tenantID) AND d.notification_id = \(id)
            ORDER BY d.created_at, d.id
            """)
        let deliveries = try deliveryRows.map { row in
            let (deliveryID, deviceID, token, platform, provider, deviceState, status, attemptCount, due, deadline) =
                try row.decode((UUID, UUID, String, String, String, String, String, Int, Date, Date).self)
            return DeliveryRecord(
                id: deliveryID, deviceID: deviceID, tokenPreview: TokenDisplay.preview(token, provider: PushProvider(rawValue: provider) ?? .fcm),
                address: try row.decode(String.self, at: 14),
                platform: platform, provider: provider,
                deviceState: deviceState, status: status, attemptCount: attemptCount, dueAt: due, deadlineAt: deadline,
                sentAt: try row.decode(Date?.self, at: 10), messageID: try row.decode(String?.self, at: 11),
                httpStatus: try row.decode(Int?.self, at: 12), lastError: try row.decode(String?.self, at: 13),
                attempts: attempts[deliveryID] ?? [])
        }
        return HistoryDetail(
            notification: entry, data: data, badge: badge, sound: sound, threadID: threadID, imageURL: imageURL, liveActivity: live,
            deliveries: deliveries)
    }

    static func historyEntry(_ row: PostgresRow) throws -> HistoryEntry {
        let (id, kind, eventID, personID, email, name, app, title, body, status) =
            try row.decode((UUID, String, UUID, UUID, String, String, String, String, String, String).self)
        return HistoryEntry(
            id: id, event: kind, eventID: eventID, recipient: PersonReference(id: personID, email: email, name: name),
            app: try decodeEnum(app), title: title, body: body, status: status, reason: try row.decode(String?.self, at: 10),
            devices: try row.decode(Int.self, at: 11), devicesSent: try row.decode(Int.self, at: 12),
            activityID: try row.decode(UUID?.self, at: 13), conversationID: try row.decode(UUID?.self, at: 14),
            eventAt: try row.decode(Date.self, at: 15), createdAt: try row.decode(Date.self, at: 16),
            sentAt: try row.decode(Date?.self, at: 17),
            decision: try row.decode(String?.self, at: 21).flatMap { NotificationDecision(rawValue: $0) },
            deferredUntil: try row.decode(Date?.self, at: 22), digestID: try row.decode(UUID?.self, at: 23),
            wordsWithheld: !(try row.decode(Bool.self, at: 24)), engagement: try engagement(row, from: 25))
    }
}

extension PostgresQuery.StringInterpolation {
    /// The notifications of `notification_outcomes` (the status its deliveries add up to: the
    /// view does the sums) with their words as `policy` may read them (`AccessPolicy.mayReadWords`):
    /// a conversation's notification shows someone who may not read it only its trace.
    mutating func appendInterpolation(historyOf policy: AccessPolicy) {
        appendLiteral(
            """
            SELECT n.id, n.kind, n.event_id, p.id AS person_id, p.email, p.display_name, n.app,
                   CASE WHEN w.readable THEN n.title ELSE\u{20}
            """)
        appendInterpolation(AccessPolicy.withheldTitle)
        appendLiteral(" END AS title, CASE WHEN w.readable THEN n.body ELSE ")
        appendInterpolation(AccessPolicy.withheldBody)
        appendLiteral(
            """
             END AS body, n.status,
                   n.reason, n.devices, n.devices_sent, n.activity_id, n.conversation_id, n.event_at, n.created_at, n.sent_at,
                   n.recipient_id, n.team_id, n.tenant_id, n.decision, n.deferred_until, n.digest_id, w.readable AS words_readable,\u{20}
            """)
        appendLiteral(TenantSession.engagementColumns)
        appendLiteral(
            """

            FROM notification_outcomes n
            JOIN people p ON p.tenant_id = n.tenant_id AND p.id = n.recipient_id
            CROSS JOIN LATERAL (SELECT
            """)
        appendInterpolation(notificationWordsReadableBy: policy)
        appendLiteral(" AS readable) w")
    }
}
