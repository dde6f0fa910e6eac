import Foundation
import HeraldCore
import HeraldPostgres

extension TenantSession {
    /// Assigns a new activity: checks the actor, stores it, records the transition and
    /// appends `activity.assigned` to the outbox, all in this session's transaction.
    /// - Throws: `InputError`; `StoreError` (`.notFound`, `.forbidden`, `.invalid`).
    public func assignActivity(
        actor email: String, team teamSlug: String, assignee assigneeEmail: String, name: String, deadline: LocalDate,
        priority: Priority = .p2
    ) async throws -> ActivityRecord {
        try await assignActivity(
            by: try await person(email: email), team: teamSlug, assignee: assigneeEmail, name: name, deadline: deadline, priority: priority)
    }

    /// `assignActivity` by a person already read (an API caller): the team, both roles and
    /// the assignee in one query, the activity and its first transition in one statement.
    public func assignActivity(
        by actor: Person, team teamSlug: String, assignee assigneeEmail: String, name: String, deadline: LocalDate,
        priority: Priority = .p2
    ) async throws -> ActivityRecord {
        let name = try Input.name(name, field: "activity name")
        let assigneeEmail = try Input.email(assigneeEmail)
        let rows = try await connection.query(
            """
            SELECT t.id, t.slug, t.name, t.created_at,
                   (SELECT role FROM team_members r WHERE r.tenant_id = t.tenant_id AND r.team_id = t.id AND r.person_id = \(actor.id)) AS actor_role,
                   p.id, p.email, p.display_name, p.locale, p.time_zone, p.is_admin, p.created_at,
                   (SELECT role FROM team_members r WHERE r.tenant_id = t.tenant_id AND r.team_id = t.id AND r.person_id = p.id) AS assignee_role,
                   (SELECT policy::text FROM tenant_policies WHERE tenant_id = t.tenant_id) AS policy
            FROM teams t LEFT JOIN people p ON p.tenant_id = t.tenant_id AND p.email = \(assigneeEmail)
            WHERE t.tenant_id = \(tenantID) AND t.slug = \(teamSlug)
            """)
        guard let row = rows.first else { throw StoreError(.notFound, "no team \"\(teamSlug)\" in tenant \(tenant.slug)") }
        let team = try Self.team(row)
        let actorRole: TeamRole? = try row.decode(String?.self, column: "actor_role").map(Self.decodeEnum)
        let relation = ActivityStateMachine.Actor(policy: AccessPolicy(actor), isAssignee: false, role: actorRole)
        let transition = try decide(.assign, from: nil, by: relation, actor: actor, activity: nil)

        guard try row.decode(UUID?.self, at: 5) != nil else {
            throw StoreError(.notFound, "no person \(assigneeEmail) in tenant \(tenant.slug)")
        }
        let assignee = try Self.person(row, from: 5)
        switch try row.decode(String?.self, column: "assignee_role").map(Self.decodeEnum) as TeamRole? {
        case .member: break
        case .manager:
            throw StoreError(.invalid, "\(assignee.email) is a manager of team \(team.slug); activities are assigned to its members")
        case nil:
            throw StoreError(.invalid, "\(assignee.email) is not a member of team \(team.slug)")
        }

        let id = UUID.v7()
        let createdAt = try await connection.query(
            """
            WITH created AS (
                INSERT INTO activities (tenant_id, id, team_id, manager_id, assignee_id, name, priority, deadline, status)
                VALUES (\(tenantID), \(id), \(team.id), \(actor.id), \(assignee.id), \(name), \(priority.rawValue),
                        \(deadline.description)::date, \(transition.to.rawValue))
                RETURNING created_at
            ), step AS (
                INSERT INTO activity_transitions (tenant_id, id, activity_id, actor_id, action, from_status, to_status, reason, at)
                SELECT \(tenantID), \(UUID.v7()), \(id), \(actor.id), \(transition.action.rawValue), NULL, \(transition.to.rawValue), NULL, created_at
                FROM created
            )
            SELECT created_at FROM created
            """
        ).single().decode(Date.self, at: 0)
        let activity = ActivityRecord(
            id: id, team: .init(id: team.id, slug: team.slug, name: team.name), name: name, priority: priority,
            deadline: deadline, status: transition.to, version: 1, manager: actor.reference, assignee: assignee.reference,
            createdAt: createdAt, updatedAt: createdAt)
        let policy = try Self.policy(row, column: "policy")
        try await appendEvent(
            transition, on: activity, actor: actor.reference, reason: nil, at: createdAt,
            timers: .assignment(of: activity, timeZone: assignee.timeZone, policy: policy))
        return activity
    }

    /// Starts, completes, approves or rejects an activity, with a version check: of two
    /// concurrent actions exactly one wins and the other gets `StoreError.conflict`. Pushes
    /// about the activity that no provider has taken yet are cancelled as superseded.
    /// - Parameter expectedVersion: the version the caller last saw (HTTP `If-Match`): when
    ///   the activity has moved on since, nothing changes and `.stale` is thrown.
    /// - Throws: `InputError`; `StoreError` (`.notFound`, `.forbidden`,
    ///   `.invalidTransition` naming the status and what it allows, `.conflict`, `.stale`).
    public func act(
        _ action: ActivityAction, on id: UUID, actor email: String, reason: String? = nil, expectedVersion: Int? = nil
    ) async throws -> ActivityRecord {
        try await act(action, on: id, by: try await person(email: email), reason: reason, expectedVersion: expectedVersion)
    }

    /// `act` by a person already read (an API caller): the activity and the actor's role in
    /// one query, the change and its transition in one statement, the event in another.
    /// - Parameter concealingInvisible: an activity the actor may not see (neither theirs,
    ///   nor their team's as its manager, nor an admin's) is `.notFound`, as if it did not
    ///   exist (the API), rather than `.forbidden` (the operator's CLI).
    public func act(
        _ action: ActivityAction, on id: UUID, by actor: Person, reason: String? = nil, expectedVersion: Int? = nil,
        concealingInvisible: Bool = false
    ) async throws -> ActivityRecord {
        guard action != .assign else { throw StoreError(.invalid, "use assignActivity to assign") }
        let reason = try reason.map { try Input.text($0, field: "reason") }.flatMap { $0.isEmpty ? nil : $0 }
        let rows = try await connection.query(
            """
            SELECT \(unsafeRaw: Self.activityColumns),
                   (SELECT role FROM team_members r WHERE r.tenant_id = a.tenant_id AND r.team_id = a.team_id AND r.person_id = \(actor.id)) AS actor_role,
                   (SELECT policy::text FROM tenant_policies WHERE tenant_id = a.tenant_id) AS policy
            FROM \(unsafeRaw: Self.activityTables) WHERE a.tenant_id = \(tenantID) AND a.id = \(id)
            """)
        let actorRole: TeamRole? = try rows.first.flatMap { try $0.decode(String?.self, column: "actor_role") }.map(Self.decodeEnum)
        guard let row = rows.first, case let activity = try Self.activity(row),
            !concealingInvisible || AccessPolicy(actor).maySeeActivity(assignee: activity.assignee.id, role: actorRole)
        else { throw StoreError(.notFound, "no activity \(id.lowercasedString) in tenant \(tenant.slug)") }
        if let expectedVersion, expectedVersion != activity.version {
            throw StoreError(.stale, "activity \(id.lowercasedString) is at version \(activity.version), not \(expectedVersion); look again")
        }
        let relation = ActivityStateMachine.Actor(policy: AccessPolicy(actor), isAssignee: activity.assignee.id == actor.id, role: actorRole)
        let transition = try decide(action, from: activity.status, by: relation, actor: actor, activity: activity)
        let policy = try Self.policy(row, column: "policy")

        let ceiling = HistoryRetention.idCeiling()
        // One plan for every transition on this connection, pruned to the activity's weeks as
        // it runs. Left to choose, PostgreSQL compared a plan made for the values (pruned at
        // planning) with a generic one over every week's partition, found the generic dearer,
        // and planned the whole statement again on every transition: a quarter of the rate.
        connection.deferScript("SET LOCAL plan_cache_mode = force_generic_plan")
        let updated = try await connection.query(
            """
            WITH moved AS (
                UPDATE activities SET status = \(transition.to.rawValue), version = version + 1, updated_at = now()
                WHERE tenant_id = \(tenantID) AND id = \(id) AND version = \(activity.version)
                RETURNING version, updated_at
            ), step AS (
                INSERT INTO activity_transitions (tenant_id, id, activity_id, actor_id, action, from_status, to_status, reason, at)
                SELECT \(tenantID), \(UUID.v7()), \(id), \(actor.id), \(transition.action.rawValue),
                       \(transition.from?.rawValue), \(transition.to.rawValue), \(reason), updated_at
                FROM moved
            ), superseded AS (
                -- Pushes about this activity that no provider has taken yet (queued, or waiting
                -- to be retried) describe a state it has left: they are not sent (its Live
                -- Activity's updates too, as a newer content state would: `liveActivityStatement`).
                -- Its notifications are no older than the activity (their ids carry their event's
                -- time, its id its creation's): only those weeks' partitions are planned and read.
                UPDATE deliveries d SET status = 'cancelled', last_error = \("superseded by " + transition.event.rawValue), updated_at = now()
                FROM notifications n
                WHERE d.tenant_id = \(tenantID) AND d.status = 'queued' AND n.tenant_id = d.tenant_id AND n.id = d.notification_id
                  AND n.activity_id = \(id) AND EXISTS (SELECT FROM moved)
                  -- (One a worker is sending now has been taken: it is left to its outcome.)
                  AND NOT herald_delivery_leased(d.tenant_id, d.id)
                  -- (A Live Activity's start is never moot: the next update brings it up to date.)
                  AND n.kind <> \(LiveActivityContent.Event.start.notificationKind)
                  AND n.id >= \(id.v7Floor) AND n.id < \(ceiling) AND d.id >= \(id.v7Floor) AND d.id < \(ceiling)
                RETURNING n.id, n.recipient_id, n.app, n.kind, n.activity_id, n.conversation_id, d.last_error
            ), told AS (
                -- Each notification whose pushes were cancelled, once, for a tenant with a webhook
                -- endpoint (docs/webhooks.md): a row of the durable feed no socket sees.
                INSERT INTO live_pending (tenant_id, kind, payload)
                SELECT DISTINCT ON (s.id) \(tenantID), 'outcome', jsonb_build_object(
                    'type', 'notification.superseded',
                    'data', jsonb_build_object('notificationId', s.id, 'recipientId', s.recipient_id, 'app', s.app, 'event', s.kind,
                                               'activityId', s.activity_id, 'conversationId', s.conversation_id, 'decision', 'superseded',
                                               'reason', s.last_error, 'deferredUntil', NULL))
                FROM superseded s
                WHERE EXISTS (SELECT FROM webhook_endpoints w WHERE w.tenant_id = \(tenantID))
            )
            SELECT version, updated_at FROM moved
            """)
        guard let row = updated.first else {
            let now = try await self.activity(id: id)
            throw StoreError(
                expectedVersion == nil ? .conflict : .stale,
                "activity \(id.lowercasedString) was changed by someone else meanwhile (it is now \(now.status.rawValue)); "
                    + "look again and retry")
        }
        let (version, updatedAt) = try row.decode((Int, Date).self)
        let result = ActivityRecord(
            id: activity.id, team: activity.team, name: activity.name, priority: activity.priority, deadline: activity.deadline,
            status: transition.to, version: version, manager: activity.manager, assignee: activity.assignee,
            createdAt: activity.createdAt, updatedAt: updatedAt)
        try await appendEvent(
            transition, on: result, actor: actor.reference, reason: reason, at: updatedAt,
            timers: .transition(transition, activity: result, policy: policy))
        return result
    }

    /// Asks the state machine, turning a refusal into a `StoreError` that names the person,
    /// the status and the allowed actions.
    private func decide(
        _ action: ActivityAction, from status: ActivityStatus?, by relation: ActivityStateMachine.Actor, actor: Person,
        activity: ActivityRecord?
    ) throws -> ActivityStateMachine.Transition {
        switch ActivityStateMachine.decide(action, from: status, by: relation) {
        case .success(let transition):
            return transition
        case .failure(.forbidden(let action, let requirement)):
            throw StoreError(
                .forbidden,
                "\(actor.email) may not \(action.rawValue) \(activity.map(Self.describe) ?? "activities in this team"): only \(requirement) may")
        case .failure(.invalidTransition(let action, let status, let allowed)):
            let statusName = status?.rawValue ?? "new"
            let options =
                allowed.isEmpty
                ? "nothing is allowed from \(statusName)" : "from \(statusName) only \(allowed.map(\.rawValue).joined(separator: ", ")) is allowed"
            var error = StoreError(
                .invalidTransition, "cannot \(action.rawValue) \(activity.map(Self.describe) ?? "it"): it is \(statusName); \(options)")
            error.currentStatus = status
            error.allowedActions = allowed
            throw error
        }
    }

    private static func describe(_ activity: ActivityRecord) -> String {
        "activity \(activity.id.lowercasedString) (\"\(activity.name)\")"
    }

    /// Appends the transition's event with its snapshot to the outbox (the transition row
    /// itself is written with the change) and applies `timers`, then NOTIFYs (which
    /// PostgreSQL delivers only if the transaction commits).
    private func appendEvent(
        _ transition: ActivityStateMachine.Transition, on activity: ActivityRecord, actor: PersonReference, reason: String?, at: Date,
        timers: TimerChanges
    ) async throws {
        let recipients = Routing.activity(
            transition.event, manager: activity.manager.id, assignee: activity.assignee.id, actor: actor.id)
        let payload = ActivityEventPayload(
            event: transition.event, activityID: activity.id, teamID: activity.team.id, teamName: activity.team.name,
            activityName: activity.name, priority: activity.priority, deadline: activity.deadline, status: transition.to,
            actor: actor, manager: activity.manager, assignee: activity.assignee, recipients: recipients, reason: reason,
            occurredAt: at, version: activity.version)
        try await appendToOutbox(
            transition.event, about: .activity(activity.id), actor: actor.id, recipients: recipients.map(\.id), payload: payload, at: at,
            timers: timers)
        try await appendLive(.activity, .activity(activity.id), payload: LiveActivityChange(event: transition.event, activity: activity))
    }

    // MARK: Reading

    /// The activity with this id in this tenant.
    /// - Throws: `StoreError.notFound` (also for another tenant's id).
    public func activity(id: UUID) async throws -> ActivityRecord {
        let rows = try await connection.query(
            ("\(unsafeRaw: Self.activitySelect) WHERE a.tenant_id = \(tenantID) AND a.id = \(id)" as PostgresQuery).inBinary)
        guard let row = rows.first else {
            throw StoreError(.notFound, "no activity \(id.lowercasedString) in tenant \(tenant.slug)")
        }
        return try Self.activity(row)
    }

    /// The steps of an activity's life, oldest first.
    public func transitions(activity id: UUID) async throws -> [ActivityTransitionRecord] {
        try await connection.query(
            """
            SELECT t.action, t.from_status, t.to_status, p.id, p.email, p.display_name, t.reason, t.at
            FROM activity_transitions t JOIN people p ON p.tenant_id = t.tenant_id AND p.id = t.actor_id
            WHERE t.tenant_id = \(tenantID) AND t.activity_id = \(id)
            ORDER BY t.at, t.id
            """
        ).map { row in
            let (action, from, to, actorID, email, name, reason, at) =
                try row.decode((String, String?, String, UUID, String, String, String?, Date).self)
            return ActivityTransitionRecord(
                action: try Self.decodeEnum(action), from: try from.map { try Self.decodeEnum($0) }, to: try Self.decodeEnum(to),
                actor: PersonReference(id: actorID, email: email, name: name), reason: reason, at: at)
        }
    }

    /// Outbox events of one activity, in order.
    public func events(activity id: UUID) async throws -> [OutboxEvent] {
        try await connection.query(
            """
            SELECT id, seq, kind, activity_id, actor_id, recipient_ids, occurred_at FROM outbox
            WHERE tenant_id = \(tenantID) AND activity_id = \(id) ORDER BY seq
            """
        ).map { row in
            let (id, sequence, kind, activityID, actorID, recipients, at) =
                try row.decode((UUID, Int64, String, UUID?, UUID, [UUID], Date).self)
            return OutboxEvent(
                id: id, sequence: sequence, kind: try Self.decodeEnum(kind), activityID: activityID, actorID: actorID,
                recipientIDs: recipients, occurredAt: at)
        }
    }

    /// What `activity(_:)` decodes, in its order, from `activityTables`. Read in the binary
    /// format (`PostgresQuery.inBinary`: a page of 50 activities has 200 ids and 100 instants).
    static let activityColumns = """
        a.id, t.id, t.slug, t.name, a.name, a.priority, a.deadline::text, a.status, a.version,
               m.id, m.email, m.display_name, s.id, s.email, s.display_name, a.created_at, a.updated_at
        """
    static let activityTables = """
        activities a
        JOIN teams t ON t.tenant_id = a.tenant_id AND t.id = a.team_id
        JOIN people m ON m.tenant_id = a.tenant_id AND m.id = a.manager_id
        JOIN people s ON s.tenant_id = a.tenant_id AND s.id = a.assignee_id
        """
    static let activitySelect = "SELECT \(activityColumns) FROM \(activityTables)"

    static func activity(_ row: PostgresRow) throws -> ActivityRecord {
        let (id, teamID, teamSlug, teamName, name, priority, deadline, status, version) =
            try row.decode((UUID, UUID, String, String, String, String, String, String, Int).self)
        guard let date = LocalDate(deadline) else {
            throw PostgresError(kind: .decoding, message: "unexpected deadline \"\(deadline)\" in the database")
        }
        return ActivityRecord(
            id: id, team: .init(id: teamID, slug: teamSlug, name: teamName), name: name, priority: try decodeEnum(priority),
            deadline: date, status: try decodeEnum(status), version: version,
            manager: PersonReference(id: try row.decode(at: 9), email: try row.decode(at: 10), name: try row.decode(at: 11)),
            assignee: PersonReference(id: try row.decode(at: 12), email: try row.decode(at: 13), name: try row.decode(at: 14)),
            createdAt: try row.decode(at: 15), updatedAt: try row.decode(at: 16))
    }
}
