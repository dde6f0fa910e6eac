import Foundation
import HeraldCore
import HeraldPostgres

/// The feed of durable live frames (docs/live-protocol.md): written with the change it reports
/// (`TenantSession.appendLive`), numbered by the sequencer in commit order, read in a
/// tenant's scope with the API's access rules (`TenantSession.liveRows`). The webhooks of
/// §18 read the same feed (`Store.feedWebhooks`).
public enum LiveFeed {
    /// NOTIFY channel of writers (payload empty): there are rows for the sequencer.
    public static let pendingChannel = "herald_live_pending"
    /// NOTIFY channel of the sequencer (payload: the newest position): there are new frames.
    public static let feedChannel = "herald_live"
    /// The advisory lock that makes the sequencer one at a time, across servers.
    static let sequencerLock: Int64 = 0x4865_7261_6C64_4C76
    /// How many pending rows one sequencer transaction moves.
    static let sequencerBatch = 5_000
}

extension TenantSession {
    /// Writes a frame's row in this session's transaction; the sequencer numbers it once the
    /// transaction commits (a NOTIFY wakes it then, and not at all on a rollback). Sent with
    /// the transaction's next statement (`PostgresConnection.enqueue`).
    func appendLive<Payload: Codable & Sendable>(_ kind: LiveKind, _ audience: LiveAudience, payload: Payload) async throws {
        var (person, conversation, activity, excluded): (UUID?, UUID?, UUID?, UUID?) = (nil, nil, nil, nil)
        switch audience {
        case .person(let id): person = id
        case .conversation(let id, let excluding): (conversation, excluded) = (id, excluding)
        case .activity(let id): activity = id
        case .webhooksOnly: break
        }
        // A row for webhooks only is written when the tenant has an endpoint.
        let forWebhooks = audience == .webhooksOnly
        connection.enqueue(
            """
            WITH pending AS (
                INSERT INTO live_pending (tenant_id, kind, person_id, conversation_id, activity_id, about_person, payload)
                SELECT \(tenantID), \(kind.rawValue), \(person), \(conversation), \(activity), \(excluded), \(PostgresJSON(payload))
                WHERE NOT \(forWebhooks) OR EXISTS (SELECT FROM webhook_endpoints w WHERE w.tenant_id = \(tenantID))
            )
            SELECT pg_notify(\(LiveFeed.pendingChannel), '')
            """)
    }

    /// The frames after position `after` up to `through` that each of `readers` may see (the
    /// API's rules, `AccessPolicy+SQL`), in order of position, at most `limit` rows.
    /// - Parameter readers: nil: everyone who may see each row (a server holding many sockets
    ///   picks its own out of each row's audience, rather than send them all with every query).
    /// - Parameter afterReader: with `after`, where the last page ended: rows of position
    ///   `after` for readers after this one come first.
    /// - Parameter committing: the read ends the transaction, its `COMMIT` in the same round
    ///   trip (a caller that does nothing else in it: the live server's rounds).
    public func liveRows(
        for readers: [Person]?, after: Int64, afterReader: UUID? = nil, through: Int64, limit: Int = 1_000, committing: Bool = false
    ) async throws -> [LiveRow] {
        guard readers?.isEmpty != true, through > after || (through == after && afterReader != nil) else { return [] }
        // Planned for the readers at hand: their list is then a constant, which PostgreSQL
        // looks people up in by hash; in a plan kept for any list, every audience row would
        // walk it (a reconnect storm names thousands). Without readers nothing in the plan
        // depends on the values (a tenant and a range of positions): planned once a
        // connection, on the indexes, rather than again at most runs (PostgreSQL's own choice
        // planned 6 runs in 10 anew: 0.9 ms of planning for 0.3 of work a run).
        if readers != nil {
            connection.enqueue("SET LOCAL plan_cache_mode = force_custom_plan")
        } else {
            connection.deferScript(Store.plannedOnceOnIndexes)
        }
        let query: PostgresQuery = """
            SELECT f.position, a.person_id, f.kind, f.conversation_id, f.payload::text
            FROM live_feed f
            CROSS JOIN LATERAL (SELECT person_id FROM (\(liveRowAudience: ())) AS audience OFFSET 0) AS a
            WHERE f.tenant_id = \(tenantID) AND f.position >= \(after) AND f.position <= \(through) AND a.person_id IS NOT NULL
              \(onlyReaders: readers?.map(\.id), tenant: tenantID)
              AND (f.position > \(after) OR a.person_id > \(afterReader ?? UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))))
            ORDER BY f.position, a.person_id
            \(limit: limit)
            """
        let rows = committing ? try await connection.query(query, followedBy: "COMMIT") : try await connection.query(query)
        // A row comes once a reader: its payload is read once.
        var payloads: [Int64: LivePayload] = [:]
        return try rows.map { row in
            let (position, reader, kind, conversation, payload) = try row.decode((Int64, UUID, String, UUID?, String).self)
            if let known = payloads[position] { return LiveRow(position: position, reader: reader, payload: known) }
            let decoded = try Self.livePayload(kind, conversation: conversation, json: payload)
            payloads[position] = decoded
            return LiveRow(position: position, reader: reader, payload: decoded)
        }
    }

    static func livePayload(_ kind: String, conversation: UUID?, json: String) throws -> LivePayload {
        func decode<Value: Codable & Sendable>(_ type: Value.Type) throws -> Value {
            try PostgresJSON<Value>(postgresText: json, type: .jsonb).value
        }
        guard let kind = LiveKind(rawValue: kind) else { throw StoreError(.invalid, "a live frame of unknown kind \(kind)") }
        switch (kind, conversation) {
        case (.message, let id?): return .message(conversation: id, try decode(MessageRecord.self))
        case (.receipt, let id?):
            // A participant's own, or the batch a round wrote for one sender (`markReceived`).
            if let batch = try? decode(LiveReceiptBatch.self) { return .deliveryReceipts(conversation: id, batch.receipts) }
            return .receipt(conversation: id, try decode(LiveReceipt.self))
        case (.conversation, let id?): return .conversation(id)
        case (.activity, _): return .activity(try decode(LiveActivityChange.self))
        case (.notification, _): return .notification(try decode(LiveNotification.self))
        case (.inboxStatus, _): return .inboxStatus(try decode(InboxStatusChange.self))
        case (.message, nil), (.receipt, nil), (.conversation, nil):
            throw StoreError(.invalid, "a live \(kind.rawValue) frame without its conversation")
        }
    }
}

extension Store {
    /// Numbers the committed pending rows into the feed, one sequencer at a time across
    /// servers, and NOTIFYs the feed's channel. - Returns: how many rows it moved.
    /// - Parameter floor: where the pending rows begin, as this process's earlier rounds
    ///   found (`QueueFloor`): the round reads from there, so that rows already moved, which a
    ///   snapshot held elsewhere keeps from vacuum, are not walked again. A new one reads all.
    @discardableResult
    public func sequenceLive(floor: QueueFloor = QueueFloor()) async throws -> Int {
        try await pool.withTransaction(setup: DatabaseRole.live.forTransaction) { connection in
            // The lock, then the highest id, in one round trip with the transaction's begin.
            // The lock is taken before the statement that reads the pending rows: that
            // statement's snapshot then sees every row the previous sequencer moved, and its
            // positions come after the previous one's. The highest id handed out is read
            // before the statement whose snapshot is noted (see `QueueFloor`; max(id) over the
            // table walked every row a held snapshot kept).
            let now = ContinuousClock.now
            let (from, mark) = floor.nextLook(at: now)
            let highest = try await connection.query([
                "SELECT pg_advisory_xact_lock(\(LiveFeed.sequencerLock))",
                "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM live_pending_id_seq"
            ])[1].single().decode(Int64.self, at: 0)
            // One plan a connection, on the indexes: PostgreSQL's own choice planned it again
            // at 4 runs in 10 in one run of the live bench, at 1 in 170 in another.
            connection.deferScript(Store.plannedOnceOnIndexes)
            // Committed in the same round trip: should the connection be lost on the way,
            // the body runs again, and moves what is still pending.
            let row = try await connection.query(
                """
                WITH moved AS (
                    DELETE FROM live_pending
                    WHERE id IN (SELECT id FROM live_pending WHERE id >= \(from) ORDER BY id \(limit: LiveFeed.sequencerBatch))
                    RETURNING *
                ), numbered AS (
                    INSERT INTO live_feed (position, tenant_id, kind, person_id, conversation_id, activity_id, about_person, payload, created_at)
                    SELECT \(positionsOfRow: ()), tenant_id, kind, person_id, conversation_id, activity_id, about_person, payload, created_at
                    FROM (SELECT * FROM moved ORDER BY id) m
                    RETURNING position
                ), summary AS (
                    SELECT count(*)::int AS moved, coalesce(max(position), 0) AS newest FROM numbered
                )
                -- The feed's NOTIFY in the same statement, only when rows moved (the gate is
                -- checked before the function runs). Then what the floor needs: the lowest
                -- row left (the moved ones are the lowest from the floor on), this snapshot,
                -- and whether the transactions the oldest noted snapshot saw in progress have
                -- all ended.
                SELECT moved, newest, (SELECT 1 FROM pg_notify(\(LiveFeed.feedChannel), newest::text) WHERE moved > 0),
                       (SELECT id FROM live_pending WHERE id > coalesce((SELECT max(id) FROM moved), \(from) - 1) ORDER BY id LIMIT 1),
                       pg_current_snapshot()::text,
                       coalesce((SELECT bool_and(pg_xact_status(x) IS DISTINCT FROM 'in progress')
                                 FROM pg_snapshot_xip(\(mark?.snapshot ?? "1:1:")::pg_snapshot) x), true)
                FROM summary
                """, followedBy: "COMMIT"
            ).single()
            let settled = try row.decode(Bool.self, at: 5)
            floor.update(
                looked: from, lowestPending: try row.decode(Int64?.self, at: 3),
                mark: QueueFloor.Mark(snapshot: try row.decode(String.self, at: 4), highest: highest),
                askedMarkSettled: mark != nil && settled, at: now)
            return try row.decode(Int.self, at: 0)
        }
    }

    /// The newest position of the feed (0 when empty): every frame up to it is visible.
    public func liveHead() async throws -> Int64 {
        // A transaction in one round trip: its begin, the read and its commit.
        try await pool.withTransaction(setup: DatabaseRole.live.forTransaction) { connection in
            try await connection.query("SELECT coalesce(max(position), 0) FROM live_feed", followedBy: "COMMIT").single()
                .decode(Int64.self, at: 0)
        }
    }

    /// The newest position and the one up to which frames were pruned, read together (for a
    /// socket about to open: one statement, since a reconnect storm asks this of every socket).
    public func livePositions() async throws -> (head: Int64, horizon: Int64) {
        try await pool.withTransaction(setup: DatabaseRole.live.forTransaction) { connection in
            try await connection.query(
                """
                SELECT (SELECT coalesce(max(position), 0) FROM live_feed), (SELECT coalesce(max(pruned_through), 0) FROM live_horizon)
                """
            ).single().decode((Int64, Int64).self)
        }
    }

    /// Removes frames older than `age` and moves the horizon past them. - Returns: how many.
    @discardableResult
    public func pruneLive(olderThan age: Duration) async throws -> Int {
        try await pool.withTransaction(setup: DatabaseRole.live.forTransaction) { connection in
            let row = try await connection.query(
                """
                WITH gone AS (
                    -- Never a row the webhooks have not read yet (their workers were down that long).
                    DELETE FROM live_feed WHERE created_at < now() - make_interval(secs => \(age.timeInterval))
                        AND position <= (SELECT position FROM webhook_cursor WHERE id = 1)
                    RETURNING position
                ), horizon AS (
                    INSERT INTO live_horizon (id, pruned_through) SELECT 1, max(position) FROM gone HAVING count(*) > 0
                    ON CONFLICT (id) DO UPDATE SET pruned_through = greatest(live_horizon.pruned_through, excluded.pruned_through)
                )
                SELECT count(*)::int FROM gone
                """
            ).single()
            return try row.decode(Int.self, at: 0)
        }
    }
}

extension PostgresQuery.StringInterpolation {
    /// The position of a pending row `m` being numbered: the last of as many new ones as it has
    /// frames (`LivePayload.positions`: a batch of receipts takes one a receipt, so that every
    /// frame keeps a cursor of its own). The sequencer runs one at a time and nothing else
    /// takes positions, so a row's are consecutive.
    fileprivate mutating func appendInterpolation(positionsOfRow _: Void) {
        appendLiteral(
            """
            (SELECT max(nextval('live_feed_position')) FROM generate_series(1,
                CASE WHEN m.kind = 'receipt' AND m.payload ? 'receipts' THEN greatest(jsonb_array_length(m.payload -> 'receipts'), 1) ELSE 1 END))
            """)
    }

    /// With `readers`, the audience rows `a` of them alone; nothing without readers. The
    /// audience (`liveRowAudience`) is worked out whole (`OFFSET 0` keeps this test out of it,
    /// where PostgreSQL would look each reader up in an index once a row) and each of its rows
    /// is looked up in the readers by hash. Before that, rows no reader could see are passed
    /// over: a row for someone else (a sender's receipts), and a row of a conversation none
    /// of them ever took part in (measured: a catch-up of 1,000 readers after a 1,000-person
    /// group's busy minute 221 -> 7 ms). These only save work; the audience decides.
    fileprivate mutating func appendInterpolation(onlyReaders readers: [UUID]?, tenant: UUID) {
        guard let readers else { return }
        appendLiteral("AND a.person_id = ANY(")
        appendInterpolation(readers)
        appendLiteral("::uuid[]) AND (f.person_id IS NULL OR f.person_id = ANY(")
        appendInterpolation(readers)
        appendLiteral(
            "::uuid[])) AND (f.conversation_id IS NULL OR f.conversation_id IN (SELECT c.conversation_id FROM conversation_participants c WHERE c.tenant_id = "
        )
        appendInterpolation(tenant)
        appendLiteral(" AND c.person_id = ANY(")
        appendInterpolation(readers)
        appendLiteral("::uuid[])))")
    }
}
