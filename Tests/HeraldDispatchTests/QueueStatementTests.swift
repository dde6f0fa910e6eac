import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// The queue statements under the conditions a busy dispatcher meets: statistics taken when
/// nobody held a lease, and other statements holding row locks.
@Suite struct QueueStatementTests {
    /// Statistics from a moment when no delivery was leased make a constant lease owner look
    /// like it matches one row at most; the acknowledgement must still find each delivery of
    /// its batch by key rather than rescan the batch for every leased row of the table.
    @Test func anAcknowledgementDoesNotRescanItsBatchPerDelivery() async throws {
        try await DispatchHarness.with { harness in
            try await harness.registerMany("chidi@acme.test", count: 3_000, prefix: "phone-")
            _ = try await harness.assign()
            try await harness.withDispatcher(.init(worker: "busy")) { dispatcher in
                #expect(try await dispatcher.fanOutOnce() == (1, 3_000))
                try await harness.store.pool.query("ANALYZE deliveries")
                let claimed = try await dispatcher.queue.claimDeliveries(limit: 1_000)
                #expect(claimed.count == 1_000)
                let now = Date()
                let batch = claimed.map {
                    Acknowledgement(
                        tenantID: $0.tenantID, deliveryID: $0.id, notificationID: $0.notificationID, deviceID: $0.deviceID, provider: $0.provider,
                        attempt: $0.attempt, leaseID: $0.leaseID, status: .sent,
                        outcome: .delivered, nextAttemptAt: nil, httpStatus: 200, messageID: "m", error: nil, startedAt: now,
                        finishedAt: now)
                }
                // Which plan wins depends on the batch's size against the table's, so try a
                // few (the old statement rescanned batches of 50 and 100 here).
                for size in [10, 50, 100, 250, 1_000] {
                    let (plan, nodes) = try await Self.plan(of: dispatcher.queue.acknowledgement(Array(batch.prefix(size))), in: harness)
                    let rescans = nodes.filter {
                        $0.parentType == "Nested Loop" && $0.relationship == "Inner" && $0.type == "CTE Scan" && $0.cte == "input"
                    }
                    #expect(rescans.isEmpty, "a batch of \(size) is rescanned per delivery:\n\(plan)")
                }
                // Its generic plan, the one it runs with (planned once per connection), finds
                // each delivery by key too, for any size of batch. (The week's partition; the
                // next week's, empty, may be planned with a scan and is pruned as it starts.)
                let week = try await harness.store.pool.query("SELECT tableoid::regclass::text FROM deliveries LIMIT 1").single().decode(
                    String.self, at: 0)
                let (plan, nodes) = try await Self.genericPlan(of: dispatcher.queue.acknowledgement(batch), in: harness)
                let scans = nodes.filter { $0.type == "Seq Scan" && $0.relation == week }
                let rescans = nodes.filter {
                    $0.parentType == "Nested Loop" && $0.relationship == "Inner" && $0.type == "CTE Scan" && $0.cte == "input"
                }
                #expect(scans.isEmpty && rescans.isEmpty, "the generic plan reads the deliveries whole or the batch per delivery:\n\(plan)")
                // And the statement does what it says.
                #expect(try await dispatcher.queue.acknowledge(batch).count == 1_000)
            }
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'sent'") == 1_000)
        }
    }

    /// A claim reads the due deliveries on their index, passes over those already leased
    /// with a list hashed once (not a look per delivery), and writes no delivery: one lease
    /// row for the batch, each delivery's attempts as they were.
    @Test func aClaimWritesOneLeaseAndNoDelivery() async throws {
        try await DispatchHarness.with { harness in
            try await harness.registerMany("chidi@acme.test", count: 3_000, prefix: "phone-")
            _ = try await harness.assign()
            try await harness.withDispatcher(.init(worker: "claimer")) { dispatcher in
                #expect(try await dispatcher.fanOutOnce() == (1, 3_000))
                try await harness.store.pool.query("ANALYZE deliveries, notifications, devices")
                // Leases already held, for the claim to pass over.
                #expect(try await dispatcher.queue.claimDeliveries(limit: 1_000).count == 1_000)
                for limit in [10, 100, 512, 1_000] {
                    let (plan, nodes) = try await Self.plan(ofClaim: limit, by: dispatcher, in: harness)
                    let scans = nodes.filter { $0.type == "Seq Scan" && ($0.relation ?? "").hasPrefix("deliveries") }
                    #expect(scans.isEmpty, "a claim of \(limit) scans the deliveries:\n\(plan)")
                    #expect(plan.contains("hashed SubPlan"), "a claim of \(limit) looks for each delivery in the leases:\n\(plan)")
                }
                let claimed = try await dispatcher.queue.claimDeliveries(limit: 512)
                #expect(claimed.count == 512 && Set(claimed.map(\.id)).count == 512)
                #expect(claimed.allSatisfy { $0.attempt == 1 && $0.content.body.hasPrefix("🔻P0🔻") })
                #expect(Set(claimed.map(\.leaseID)).count == 1)
            }
            // Nothing written to the deliveries; two leases (one a claim), none of them again.
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'queued' AND attempts = 0") == 3_000)
            #expect(
                try await harness.count(
                    """
                    SELECT count(DISTINCT m.id) FROM delivery_leases l, unnest(l.deliveries, l.attempts) m(id, attempts)
                    WHERE l.worker = 'claimer' AND m.attempts = 0
                    """) == 1_512)
            #expect(try await harness.count("SELECT count(*) FROM delivery_leases") == 2)
        }
    }

    /// A claim reads each delivery's notification by its key, whatever the other indexes of
    /// the week's partition look like. (In a burn-down of four tenants, the lookup planned as
    /// a join took the tenant alone as its key, on the tiny index of tenant and creation time
    /// one fan-out transaction leaves, and filtered the tenant's whole week for every
    /// delivery. This database does not lead the old statement into that plan; it holds the
    /// statement to its key.)
    @Test func aClaimReadsEachNotificationByItsKey() async throws {
        try await DispatchHarness.with { harness in
            try await harness.registerMany("chidi@acme.test", count: 20, prefix: "phone-")
            for _ in 0..<150 { _ = try await harness.assign() }
            try await harness.withDispatcher(.init(worker: "claimer")) { dispatcher in
                while try await dispatcher.fanOutOnce().events > 0 {}
                // Three more tenants' copies of the week's notifications (history keeps no
                // foreign keys): the tenant is then a quarter of the rows, all made in one
                // fan-out transaction, as in a burn-down of several tenants. A child id keeps
                // its parent's millisecond and hashes the key, so the key names the copied row
                // too: two notifications of one millisecond collided with the tenant alone.
                try await harness.store.pool.query(
                    """
                    INSERT INTO notifications
                    SELECT (jsonb_populate_record(NULL::notifications,
                              to_jsonb(n) || jsonb_build_object('tenant_id', t.id, 'id', herald_child_id(n.id, n.id::text || t.id::text)))).*
                    FROM notifications n CROSS JOIN (SELECT gen_random_uuid() AS id FROM generate_series(1, 3)) t
                    """)
                try await harness.store.pool.query("ANALYZE deliveries, notifications, devices")
                for limit in [10, 100, 512] {
                    // Planned as the dispatcher plans it: its role, a plan for the values.
                    let (plan, nodes) = try await Self.plan(ofClaim: limit, by: dispatcher, in: harness)
                    let lookups = nodes.filter { ($0.relation ?? "").hasPrefix("notifications") && $0.type != "Seq Scan" }
                    #expect(!lookups.isEmpty && lookups.allSatisfy { ($0.index ?? "").hasSuffix("_pkey") }, "\(plan)")
                }
                #expect(try await dispatcher.queue.claimDeliveries(limit: 100).count == 100)
            }
        }
    }

    /// Fan-out's write in a tenant of 3,000 people with two phones each and an outbox of
    /// 5,000 events: for a small part (generic plan, as the dispatcher runs it) and large ones
    /// (planned for their values), each recipient's devices and each activity's later events
    /// are found by key, never by reading the tenant's devices or outbox whole, and in a large
    /// part no new row is looked for once per delivery. (Planned wrong, a batch of assignments read the
    /// tenant's whole outbox for every draft, and a part of 1,000 matched each new delivery
    /// to its notification in a nested loop over all of them.)
    @Test func aFanOutWriteFindsEachRowByKey() async throws {
        try await DispatchHarness.with { harness in
            let tenant = harness.tenant.id
            let activity = try await harness.assign()
            try await harness.store.pool.query(
                """
                WITH people AS (
                    INSERT INTO people (tenant_id, id, email, display_name)
                    SELECT \(tenant), gen_random_uuid(), 'crowd' || g || '@acme.test', 'Crowd ' || g FROM generate_series(1, 3000) g
                    RETURNING id
                )
                INSERT INTO devices (tenant_id, id, person_id, token, app, platform, provider)
                SELECT \(tenant), gen_random_uuid(), p.id, 'crowd-' || p.id || '-' || d, 'member', 'android', 'fcm'
                FROM people p, generate_series(1, 2) d
                """)
            try await harness.store.pool.query(
                """
                INSERT INTO outbox (tenant_id, id, kind, activity_id, actor_id, recipient_ids, payload, occurred_at, fanned_out_at)
                SELECT tenant_id, gen_random_uuid(), kind, gen_random_uuid(), actor_id, recipient_ids, payload, occurred_at, now()
                FROM outbox, generate_series(1, 5000) WHERE tenant_id = \(tenant) AND activity_id = \(activity.id)
                """)
            try await harness.store.pool.query("ANALYZE people, devices, outbox, notifications, deliveries")
            let event = try await harness.store.pool.query(
                "SELECT id FROM outbox WHERE tenant_id = \(tenant) AND activity_id = \(activity.id)"
            ).single().decode(UUID.self, at: 0)
            let people = try await harness.store.pool.query(
                "SELECT id FROM people WHERE tenant_id = \(tenant) AND email LIKE 'crowd%' ORDER BY email"
            ).map { try $0.decode(UUID.self, at: 0) }
            let content = NotificationContent(
                title: "Ship v2", body: "Assigned to you", data: ["type": "activity_assigned"], badge: 1, sound: true, threadID: "t")
            let claim = DeliveryQueue.FanOutClaim(worker: "planner", lease: .seconds(10), room: 256, paused: [])
            for size in [100, 1_000, 2_000] {
                let drafts = people.prefix(size).map {
                    NotificationDraft(
                        eventID: event, kind: .activityAssigned, recipientID: $0, app: .member, teamID: nil, activityID: activity.id,
                        conversationID: nil, content: content, eventAt: Date(), suppressedReason: nil)
                }
                let statement = try DeliveryQueue.writeStatement(drafts, events: [event], tenant: tenant, deadline: .seconds(3_600), claim: claim)
                let (plan, nodes) =
                    size <= FanOutTransaction.genericPlanRecipients
                    ? try await Self.genericPlan(of: statement, in: harness) : try await Self.plan(of: statement, in: harness)
                let scans = nodes.filter { $0.type == "Seq Scan" && ["devices", "outbox"].contains($0.relation ?? "") }
                #expect(scans.isEmpty, "a part of \(size) reads a table whole:\n\(plan)")
                // (The generic plan of a small part expects a handful of rows and may read its
                // new notifications once per delivery it leases: at most 200 × 200.)
                let rescans = nodes.filter { $0.parentType == "Nested Loop" && $0.relationship == "Inner" && $0.type == "CTE Scan" }
                #expect(size <= FanOutTransaction.genericPlanRecipients || rescans.isEmpty, "a part of \(size) reads new rows once per row:\n\(plan)")
                #expect(nodes.contains { $0.type == "Index Scan" && $0.index == "devices_owner" }, "\(plan)")
            }
        }
    }

    /// A look for due timers walks the index in (due time, id) order and stops at its batch,
    /// from the start or past a burst's cursor: it never reads every due timer to sort them
    /// (the due time's text, named `due_at`, once made the ORDER BY sort by the text).
    @Test func aLookForDueTimersReadsTheIndexInOrder() async throws {
        try await DispatchHarness.with { harness in
            // 5,000 reminders due over a week, one activity's periods (as a busy tenant's are).
            let activity = try await harness.assign(deadline: "2030-01-01")
            try await harness.store.pool.query(
                """
                INSERT INTO activity_timers (tenant_id, id, activity_id, kind, period, due_at, waiting_since)
                SELECT tenant_id, gen_random_uuid(), id, 'approval_reminder', p, '2029-12-25'::timestamptz + p * interval '2 minutes', now()
                FROM activities, generate_series(1000, 5999) p WHERE id = \(activity.id)
                """)
            try await harness.store.pool.query("ANALYZE activity_timers")
            let cursor = TimerCursor(dueAt: "2029-12-31 00:00:00+00", id: UUID())
            for after in [nil, cursor] {
                let statement = Store.dueTimers(at: Date(timeIntervalSinceNow: 10 * 365 * 86_400), limit: 100, tenants: [], after: after)
                let (plan, nodes) = try await Self.plan(of: statement, in: harness)
                #expect(nodes.contains { $0.type == "Index Scan" && $0.index == "activity_timers_next" }, "\(plan)")
                #expect(!nodes.contains { $0.type == "Sort" }, "\(plan)")
            }
        }
    }

    /// A lease locked by the acknowledgement that removes it is passed by, not waited for:
    /// the renewal extends every other lease of the worker and returns while the lock is held.
    @Test func renewingLeasesPassesByALeaseBeingRemoved() async throws {
        try await DispatchHarness.with { harness in
            try await harness.registerMany("chidi@acme.test", count: 2, prefix: "phone-")
            _ = try await harness.assign()
            try await harness.withDispatcher(.init(worker: "renewer", lease: .seconds(60))) { dispatcher in
                #expect(try await dispatcher.fanOutOnce() == (1, 2))
                // Two claims, two leases.
                let first = try await dispatcher.queue.claimDeliveries(limit: 1)
                let second = try await dispatcher.queue.claimDeliveries(limit: 1)
                #expect(first.count == 1 && second.count == 1 && first[0].leaseID != second[0].leaseID)
                let (locked, free) = (first[0], second[0])
                try await harness.store.pool.query("UPDATE delivery_leases SET expires_at = now() + interval '1 second' WHERE worker = 'renewer'")
                try await harness.store.pool.withTransaction(
                    // Should the renewal wait after all, the lock is given up after a while
                    // and the expectations below fail instead of the test hanging.
                    setup: "SET LOCAL idle_in_transaction_session_timeout = '20s'"
                ) { connection in
                    try await connection.query("SELECT 1 FROM delivery_leases WHERE id = \(locked.leaseID) FOR UPDATE")
                    #expect(try await dispatcher.queue.renewLeases([locked.id, free.id]) == [free.id])
                    let leases = try await harness.store.pool.query(
                        "SELECT id, expires_at > now() + interval '30 seconds' FROM delivery_leases WHERE worker = 'renewer'")
                    let renewed = Dictionary(uniqueKeysWithValues: try leases.map { try $0.decode((UUID, Bool).self) })
                    #expect(renewed == [locked.leaseID: false, free.leaseID: true])
                }
            }
        }
    }

    /// The plan of a claim of `limit` as `dispatcher` runs it: its role, a plan for the
    /// values, after the turns it takes (which name the tenants it claims for).
    static func plan(ofClaim limit: Int, by dispatcher: Dispatcher, in harness: DispatchHarness) async throws -> (String, [PlanNode]) {
        let claim = dispatcher.queue.claim(limit: limit)
        return try await dispatcher.queue.pool.withTransaction { connection in
            try await connection.query(dispatcher.queue.claimTurns(paused: []))
            let text = try await connection.query(PostgresQuery(unsafeSQL: "EXPLAIN (FORMAT JSON) " + claim.sql, binds: claim.binds))
                .single().decode(String.self, at: 0)
            return (text, try nodes(inJSONPlan: text))
        }
    }

    struct PlanNode {
        let type: String
        let parentType: String?
        let relationship: String?
        let cte: String?
        let relation: String?
        let index: String?
    }

    /// The plan PostgreSQL chooses for `statement` with its values bound: the JSON text (for
    /// failure messages) and its nodes.
    static func plan(of statement: PostgresQuery, in harness: DispatchHarness, on pool: PostgresPool? = nil) async throws -> (String, [PlanNode]) {
        let text = try await (pool ?? harness.store.pool).query(
            PostgresQuery(unsafeSQL: "EXPLAIN (FORMAT JSON) " + statement.sql, binds: statement.binds)
        ).single().decode(String.self, at: 0)
        return (text, try nodes(inJSONPlan: text))
    }

    /// The generic plan of `statement`, as a connection that prepared it once uses it
    /// (fan-out's small parts run under `plan_cache_mode = force_generic_plan`).
    static func genericPlan(of statement: PostgresQuery, in harness: DispatchHarness) async throws -> (String, [PlanNode]) {
        // (A utility statement takes no bound values: the arguments go as literals.)
        let arguments = statement.binds.values.map { value in
            value.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" } ?? "NULL"
        }.joined(separator: ", ")
        return try await harness.store.pool.withTransaction(setup: "SET LOCAL plan_cache_mode = force_generic_plan") { connection in
            try await connection.executeScript("PREPARE fan_out_write AS " + statement.sql)
            let text = try await connection.query(
                PostgresQuery(unsafeSQL: "EXPLAIN (FORMAT JSON) EXECUTE fan_out_write(\(arguments))")
            ).single().decode(String.self, at: 0)
            try await connection.executeScript("DEALLOCATE fan_out_write")
            return (text, try nodes(inJSONPlan: text))
        }
    }

    /// Every node of an `EXPLAIN (FORMAT JSON)` plan, with its parent's type.
    static func nodes(inJSONPlan text: String) throws -> [PlanNode] {
        let document = try JSONSerialization.jsonObject(with: Data(text.utf8))
        var found: [PlanNode] = []
        func visit(_ node: [String: Any], parent: String?) {
            let type = node["Node Type"] as? String ?? ""
            found.append(
                PlanNode(
                    type: type, parentType: parent, relationship: node["Parent Relationship"] as? String, cte: node["CTE Name"] as? String,
                    relation: node["Relation Name"] as? String, index: node["Index Name"] as? String))
            for child in node["Plans"] as? [[String: Any]] ?? [] {
                visit(child, parent: type)
            }
        }
        for entry in document as? [[String: Any]] ?? [] {
            if let plan = entry["Plan"] as? [String: Any] { visit(plan, parent: nil) }
        }
        #expect(!found.isEmpty, "no plan in \(text)")
        return found
    }
}
