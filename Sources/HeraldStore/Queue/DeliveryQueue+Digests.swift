import Foundation
import HeraldCore
import HeraldPostgres

extension DeliveryQueue {
    /// The first key of the advisory locks that make a person's digests one writer at a time
    /// (the second is a hash of the tenant and the person): "DG".
    static let digestLockClass: Int32 = 0x4447

    /// Finds, or opens, the digest each of `drafts` gathered by fan-out joins (in the fan-out's
    /// transaction, before its notifications are written), and sets `digest.digestID` and
    /// the reason history shows. A digest holds at most `DigestWindow.maximumItems`: the one
    /// that reaches it is due at once, and the next item opens another. An item whose app a
    /// live socket has in the foreground joins none (`shownInApp`: the app showed it).
    ///
    /// Several workers may gather for the same person at once, and one may be closing their
    /// digest: the person's advisory lock (`digestLock`) makes them take turns, so at most one
    /// digest is open per person, app and scope, and a closed one takes nothing more.
    static func gather(_ drafts: inout [NotificationDraft], tenant: UUID, now: Date, on connection: PostgresConnection) async throws {
        let gathered = drafts.indices.filter { drafts[$0].digest != nil && drafts[$0].digest?.shownInApp == false }
        for index in drafts.indices where drafts[index].digest?.shownInApp == true {
            drafts[index].deferredReason = shownReason
        }
        guard !gathered.isEmpty else { return }
        let people = Array(Set(gathered.map { drafts[$0].recipientID }))
        try await lockDigests(of: people, tenant: tenant, on: connection)

        struct Key: Hashable {
            let person: UUID
            let app: AppKind
            let scope: UUID
        }
        struct Open {
            let id: UUID
            var items: Int
            var closesAt: Date
            var isNew: Bool
            var due = false
            /// The first draft it took in this fan-out (its person, app and scope).
            var first: Int
        }
        var open: [Key: Open] = [:]
        let rows = try await connection.query(
            """
            SELECT d.id, d.person_id, d.app, d.scope_id, d.items, d.closes_at FROM digests d
            WHERE d.tenant_id = \(tenant) AND d.status = 'open' AND d.person_id = ANY(\(people))
            FOR UPDATE
            """)
        for row in rows {
            let (id, person, app, scope, items, closes) = try row.decode((UUID, UUID, String, UUID, Int, Date).self)
            guard let app = AppKind(rawValue: app) else { continue }
            open[Key(person: person, app: app, scope: scope)] = Open(id: id, items: items, closesAt: closes, isNew: false, first: -1)
        }
        var written: [Open] = []
        for index in gathered {
            guard let digest = drafts[index].digest else { continue }
            let key = Key(person: drafts[index].recipientID, app: drafts[index].app, scope: digest.scopeID)
            var current =
                open[key]
                ?? Open(
                    id: .v7(at: now), items: 0,
                    closesAt: digest.window.closes(openedAt: now, in: TimeZone(identifier: digest.timeZone) ?? .gmt), isNew: true,
                    first: index)
            if current.first < 0 { current.first = index }
            current.items += 1
            if current.items >= DigestWindow.maximumItems {
                current.due = true
                current.closesAt = min(current.closesAt, now)
            }
            drafts[index].digest?.digestID = current.id
            drafts[index].deferredReason = gatheredReason(closes: current.closesAt, full: current.due, timeZone: digest.timeZone)
            if current.due {
                written.append(current)
                open[key] = nil
            } else {
                open[key] = current
            }
        }
        // Only those this fan-out touched: new ones, and open ones that took an item.
        let changes = written + open.values.filter { $0.first >= 0 }
        try await connection.query(
            """
            INSERT INTO digests (tenant_id, id, person_id, app, scope_id, team_id, conversation_id, scope_name, status, items, opened_at, closes_at)
            SELECT \(tenant), c.id, c.person_id, c.app, c.scope_id, c.team_id, c.conversation_id, c.scope_name, c.status, c.items, \(now), c.closes_at
            FROM unnest(\(changes.map(\.id))::uuid[], \(changes.map { drafts[$0.first].recipientID })::uuid[],
                        \(changes.map { drafts[$0.first].app.rawValue })::text[],
                        \(changes.map { drafts[$0.first].digest?.scopeID })::uuid[],
                        \(changes.map { drafts[$0.first].teamID })::uuid[],
                        \(changes.map { drafts[$0.first].conversationID })::uuid[],
                        \(changes.map { drafts[$0.first].digest?.scopeName ?? "" })::text[],
                        \(changes.map { $0.due ? "due" : "open" })::text[], \(changes.map(\.items))::int[], \(changes.map(\.closesAt))::timestamptz[],
                        \(changes.map(\.isNew))::bool[])
                AS c(id, person_id, app, scope_id, team_id, conversation_id, scope_name, status, items, closes_at, is_new)
            WHERE c.is_new
            ON CONFLICT (tenant_id, id) DO NOTHING
            """)
        let existing = changes.filter { !$0.isNew }
        if !existing.isEmpty {
            try await connection.query(
                """
                UPDATE digests d SET items = c.items, status = c.status, closes_at = c.closes_at
                FROM unnest(\(existing.map(\.id))::uuid[], \(existing.map(\.items))::int[], \(existing.map { $0.due ? "due" : "open" })::text[],
                            \(existing.map(\.closesAt))::timestamptz[]) AS c(id, items, status, closes_at)
                WHERE d.tenant_id = \(tenant) AND d.id = c.id
                """)
        }
    }

    /// Takes the advisory locks of `people`'s digests, in one order (the locks' keys) so that
    /// two transactions that want the same people never wait for each other in a circle.
    static func lockDigests(of people: [UUID], tenant: UUID, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            SELECT pg_advisory_xact_lock(\(digestLockClass)::int, k.key)
            FROM (SELECT DISTINCT hashtext(\(tenant)::text || p::text) AS key FROM unnest(\(people)::uuid[]) AS p ORDER BY 1) k
            """)
    }

    /// Why a gathered notification waits, for history and `why`.
    static func gatheredReason(closes: Date, full: Bool, timeZone: String) -> String {
        let zone = TimeZone(identifier: timeZone) ?? .gmt
        return full
            ? "digest: gathered into a digest that is full (\(DigestWindow.maximumItems) items) and is sent now"
            : "digest: gathered into the digest sent at \(DeliveryDecision.local(closes, in: zone)) (\(timeZone))"
    }

    /// Why an item joins no digest: the app showed it.
    static let shownReason = "digest: left the digest: shown in the open app (a live socket had it in the foreground)"
}
