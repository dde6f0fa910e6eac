import Foundation
import HeraldCore
import HeraldPostgres

/// One event and what became of it for each of its recipients (`herald why`).
public struct WhyEvent: Sendable, Codable, Equatable {
    public let eventID: UUID
    public let event: String
    public let at: Date
    /// Who acted (nobody for reminders): they are never pushed about their own action.
    public let actor: PersonReference?
    /// Each recipient the viewer may see: the decision, every device and every attempt.
    public let recipients: [HistoryDetail]
    /// When writing the event's notifications failed (admins only).
    public let fanOut: FanOutFailures?
    /// Set while the event waits in the queue to be fanned out (no notification exists yet).
    public let queued: Queued?

    /// An event not yet fanned out: since when it waits, and the people who will be
    /// considered (those the viewer may see; `candidates` counts them all).
    public struct Queued: Sendable, Codable, Equatable {
        public let since: Date
        public let candidates: Int
        public let people: [PersonReference]
    }

    /// How an event's fan-out failed: a snapshot that cannot be read, or rows the database
    /// refused. Such an event is tried again, and passed over after a few failures of its own
    /// (at once when it cannot be read); what was written of it before stays.
    public struct FanOutFailures: Sendable, Codable, Equatable {
        public let failures: Int
        /// The last error.
        public let error: String
        /// When it was passed over, if it was.
        public let passedOverAt: Date?
        /// Whether it is still to be tried again (neither passed over nor written after all).
        public let pending: Bool
    }

    /// JSON names: identifiers end in `Id` and addresses in `Url`, as everywhere in the API.
    enum CodingKeys: String, CodingKey {
        case eventID = "eventId"
        case event
        case at
        case actor
        case recipients
        case fanOut
        case queued
    }
}

extension TenantSession {
    /// The trace of every event of an activity, oldest first, role-aware like history:
    /// who was told, on which app and devices, with every attempt — or why not.
    /// - Parameter recipient: only this person's notifications (email).
    /// - Throws: `StoreError.notFound` for an activity the viewer may not see.
    public func why(activity id: UUID, viewer: Person?, recipient: String? = nil) async throws -> [WhyEvent] {
        let seesAll = try await seesAllCandidates(of: try await activity(id: id, viewer: viewer), viewer: viewer)
        let events = try await connection.query(
            """
            SELECT o.id, o.kind, o.occurred_at, p.id, p.email, p.display_name, o.kind = ANY(\(Self.timerEvents)::text[]),
                   o.fan_out_failures, o.fan_out_error, o.passed_over_at, o.fanned_out_at IS NULL, o.recipient_ids
            FROM outbox o LEFT JOIN people p ON p.tenant_id = o.tenant_id AND p.id = o.actor_id
            WHERE o.tenant_id = \(tenantID) AND o.activity_id = \(id) ORDER BY o.seq
            """)
        return try await trace(
            events, filter: HistoryFilter(recipient: recipient, activity: id.uuidString, limit: 10_000), viewer: viewer, seesAllCandidates: seesAll)
    }

    /// The events of an activity still waiting to be fanned out, oldest first, each with whom
    /// it will consider — `why`'s `queued`, without reading every notification's history
    /// (the console's activity page has those already).
    /// - Throws: `StoreError.notFound` for an activity the viewer may not see.
    public func queuedEvents(activity id: UUID, viewer: Person?) async throws -> [(event: String, at: Date, queued: WhyEvent.Queued)] {
        let seesAll = try await seesAllCandidates(of: try await activity(id: id, viewer: viewer), viewer: viewer)
        var result: [(event: String, at: Date, queued: WhyEvent.Queued)] = []
        for row in try await connection.query(
            """
            SELECT kind, occurred_at, recipient_ids FROM outbox
            WHERE tenant_id = \(tenantID) AND activity_id = \(id) AND fanned_out_at IS NULL AND passed_over_at IS NULL ORDER BY seq
            """)
        {
            let (kind, at, candidates) = try row.decode((String, Date, [UUID]).self)
            result.append((kind, at, try await queued(since: at, candidates: candidates, seesAll: seesAll, viewer: viewer, recipient: nil)))
        }
        return result
    }

    /// Who of an activity's queued event a viewer may see: all of them for an admin or a
    /// manager of the activity's team, else the viewer alone (history's rule).
    private func seesAllCandidates(of activity: ActivityRecord, viewer: Person?) async throws -> Bool {
        let policy = AccessPolicy(viewer)
        guard let viewer, !policy.runsTheTenant else { return true }
        return policy.seesEveryRecipient(role: try await role(of: viewer.id, in: activity.team.id))
    }

    /// An event not yet fanned out: since when, how many it will consider, and those of them
    /// the viewer may see (only `recipient`, by email, when given).
    private func queued(since: Date, candidates: [UUID], seesAll: Bool, viewer: Person?, recipient: String?) async throws -> WhyEvent.Queued {
        let shown = seesAll ? candidates : candidates.filter { $0 == viewer?.id }
        let people = try await connection.query(
            """
            SELECT id, email, display_name FROM people WHERE tenant_id = \(tenantID) AND id = ANY(\(shown))
              AND (\(recipient)::text IS NULL OR email = \(recipient))
            ORDER BY email
            """
        ).map { row in
            let (id, email, name) = try row.decode((UUID, String, String).self)
            return PersonReference(id: id, email: email, name: name)
        }
        return WhyEvent.Queued(since: since, candidates: candidates.count, people: people)
    }

    /// The trace of one chat message's event; none for a system message.
    /// - Throws: `StoreError.notFound` for a message not in this tenant, or one whose
    ///   conversation the viewer is not in (admins see every one).
    public func why(message id: UUID, viewer: Person?, recipient: String? = nil) async throws -> [WhyEvent] {
        let events = try await connection.query(
            """
            SELECT o.id, o.kind, o.occurred_at, p.id, p.email, p.display_name, false,
                   o.fan_out_failures, o.fan_out_error, o.passed_over_at, o.fanned_out_at IS NULL, o.recipient_ids
            FROM outbox o JOIN messages m ON m.tenant_id = o.tenant_id AND m.id = o.message_id
            LEFT JOIN people p ON p.tenant_id = o.tenant_id AND p.id = o.actor_id
            WHERE o.tenant_id = \(tenantID) AND o.message_id = \(id) AND \(messageTraceableBy: AccessPolicy(viewer))
            """)
        guard !events.isEmpty else {
            // A system message (a join, a leave, a rename) raises no event: nobody is told.
            let system = try await connection.query(
                """
                SELECT m.is_system FROM messages m
                WHERE m.tenant_id = \(tenantID) AND m.id = \(id) AND \(messageTraceableBy: AccessPolicy(viewer))
                """
            ).first?.decode(Bool.self, at: 0)
            if system == true { return [] }
            throw StoreError(.notFound, "no message \(id.lowercasedString) in tenant \(tenant.slug)")
        }
        // A participant sees the conversation's people anyway.
        return try await trace(events, filter: HistoryFilter(recipient: recipient, limit: 10_000), viewer: viewer, seesAllCandidates: true)
    }

    private static let timerEvents = TimerKind.allCases.map(\.event.rawValue)

    private func trace(_ events: PostgresRows, filter: HistoryFilter, viewer: Person?, seesAllCandidates: Bool) async throws -> [WhyEvent] {
        var result: [WhyEvent] = []
        for row in events {
            let (eventID, kind, at, actorID, email, name, isTimer) =
                try row.decode((UUID, String, Date, UUID?, String?, String?, Bool).self)
            var filter = filter
            filter.eventID = eventID
            var details: [HistoryDetail] = []
            for entry in try await history(viewer: viewer, filter: filter).reversed() {
                details.append(try await historyDetail(viewer: viewer, id: entry.id))
            }
            let actor = isTimer ? nil : actorID.flatMap { id in email.map { PersonReference(id: id, email: $0, name: name ?? $0) } }
            var fanOut: WhyEvent.FanOutFailures?
            if AccessPolicy(viewer).maySeeFailureDetail, let error = try row.decode(String?.self, at: 8) {
                fanOut = WhyEvent.FanOutFailures(
                    failures: try row.decode(Int.self, at: 7), error: error, passedOverAt: try row.decode(Date?.self, at: 9),
                    pending: try row.decode(Bool.self, at: 10))
            }
            var queued: WhyEvent.Queued?
            let isPending = try row.decode(Bool.self, at: 10) && (try row.decode(Date?.self, at: 9)) == nil
            if isPending, details.isEmpty {
                queued = try await self.queued(
                    since: at, candidates: try row.decode([UUID].self, at: 11), seesAll: seesAllCandidates, viewer: viewer,
                    recipient: filter.recipient)
            }
            result.append(WhyEvent(eventID: eventID, event: kind, at: at, actor: actor, recipients: details, fanOut: fanOut, queued: queued))
        }
        return result
    }
}
