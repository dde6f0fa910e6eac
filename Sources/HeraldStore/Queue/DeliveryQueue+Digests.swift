import Foundation
import HeraldCore
import HeraldPostgres

extension DeliveryQueue {
    /// The first key of the advisory locks that make a person's digests one writer at a time
    /// (the second is a hash of the tenant and the person): "DG".
    static let digestLockClass: Int32 = 0x4447

    /// The second key of a person's digest lock, from SQL expressions for their tenant and id
    /// (program-written SQL only): the one place it is made, for gatherers and closers alike.
    static func digestLockKey(tenant: String, person: String) -> String {
        "hashtext(\(tenant)::text || \(person)::text)"
    }

    /// Finds, or opens, the digest each of `drafts` gathered by fan-out joins (in the fan-out's
    /// transaction, before its notifications are written), and sets `digest.digestID` and
    /// the reason history shows. A digest holds at most `DigestWindow.maximumItems`: the one
    /// that reaches it is due at once, and the next item opens another. An item whose app a
    /// live socket of its recipient has in the foreground (on a server still alive) joins
    /// none: the app shows it itself (the `notification` or `message` frame).
    ///
    /// Several workers may gather for the same person at once, and one may be closing their
    /// digest: the person's advisory lock (`lockDigests`) makes them take turns, so at most one
    /// digest is open per person, app and scope, and a closed one takes nothing more.
    static func gather(_ drafts: inout [NotificationDraft], tenant: UUID, now: Date, on connection: PostgresConnection) async throws {
        let candidates = drafts.indices.filter { drafts[$0].digest != nil }
        guard !candidates.isEmpty else { return }
        let foreground = try await connection.query(
            """
            SELECT DISTINCT v.person_id, d.app FROM live_devices v
            JOIN devices d ON d.tenant_id = v.tenant_id AND d.id = v.device_id
            JOIN live_servers s ON s.id = v.server_id
            WHERE v.tenant_id = \(tenant) AND v.person_id = ANY(\(Array(Set(candidates.map { drafts[$0].recipientID }))))
              AND d.person_id = v.person_id AND s.seen_at > now() - make_interval(secs => \(Store.liveServerLifetime.timeInterval))
            """
        ).map { row in try row.decode((UUID, String).self) }
        let shown = Set(foreground.map { "\($0.0.lowercasedString) \($0.1)" })
        var gathered: [Int] = []
        for index in candidates {
            if shown.contains("\(drafts[index].recipientID.lowercasedString) \(drafts[index].app.rawValue)") {
                drafts[index].deferredReason = shownReason
            } else {
                gathered.append(index)
            }
        }
        guard !gathered.isEmpty else { return }
        let people = Array(Set(gathered.map { drafts[$0].recipientID }))
        try await lockDigests(of: people, tenant: tenant, on: connection)

        let rows = try await connection.query(
            """
            SELECT d.id, d.person_id, d.app, d.scope_id, d.items, d.closes_at FROM digests d
            WHERE d.tenant_id = \(tenant) AND d.status = 'open' AND d.person_id = ANY(\(people))
            FOR UPDATE
            """)
        let open = try rows.compactMap { row -> DigestFilling<DigestKey>.Digest? in
            let (id, person, app, scope, items, closes) = try row.decode((UUID, UUID, String, UUID, Int, Date).self)
            guard let app = AppKind(rawValue: app) else { return nil }
            return .init(id: id, key: DigestKey(person: person, app: app, scope: scope), items: items, closesAt: closes, isNew: false)
        }
        let filling = DigestFilling(
            gathered.compactMap { index in
                drafts[index].digest.map { digest in
                    DigestFilling.Item(
                        key: DigestKey(person: drafts[index].recipientID, app: drafts[index].app, scope: digest.scopeID),
                        windowEnd: digest.window.closes(openedAt: now, in: TimeZone.named(digest.timeZone)))
                }
            }, open: open, now: now, newID: { .v7(at: now) })
        // A new digest's team, conversation and name: its first item's.
        var firstDraft: [UUID: Int] = [:]
        for (index, digest) in zip(gathered, filling.placed) {
            drafts[index].digest?.digestID = digest.id
            drafts[index].deferredReason = gatheredReason(
                closes: digest.closesAt, full: digest.isDue, timeZone: drafts[index].digest?.timeZone ?? "UTC")
            if firstDraft[digest.id] == nil { firstDraft[digest.id] = index }
        }
        // The digests that filled up are due before any other opens: the next one of the same
        // person, app and scope is open beside them (one open each, `digests_open`).
        let existing = filling.changed.filter { !$0.isNew }
        if !existing.isEmpty {
            try await connection.query(
                """
                UPDATE digests d SET items = c.items, status = c.status, closes_at = c.closes_at
                FROM unnest(\(existing.map(\.id))::uuid[], \(existing.map(\.items))::int[], \(existing.map { $0.isDue ? "due" : "open" })::text[],
                            \(existing.map(\.closesAt))::timestamptz[]) AS c(id, items, status, closes_at)
                WHERE d.tenant_id = \(tenant) AND d.id = c.id
                """)
        }
        let created = filling.changed.filter(\.isNew).compactMap { digest in firstDraft[digest.id].map { (digest, drafts[$0]) } }
        if !created.isEmpty {
            try await connection.query(
                """
                INSERT INTO digests (tenant_id, id, person_id, app, scope_id, team_id, conversation_id, scope_name, status, items, opened_at, closes_at)
                SELECT \(tenant), c.id, c.person_id, c.app, c.scope_id, c.team_id, c.conversation_id, c.scope_name, c.status, c.items, \(now), c.closes_at
                FROM unnest(\(created.map(\.0.id))::uuid[], \(created.map(\.0.key.person))::uuid[], \(created.map(\.0.key.app.rawValue))::text[],
                            \(created.map(\.0.key.scope))::uuid[], \(created.map(\.1.teamID))::uuid[], \(created.map(\.1.conversationID))::uuid[],
                            \(created.map { $0.1.digest?.scopeName ?? "" })::text[], \(created.map { $0.0.isDue ? "due" : "open" })::text[],
                            \(created.map(\.0.items))::int[], \(created.map(\.0.closesAt))::timestamptz[])
                    AS c(id, person_id, app, scope_id, team_id, conversation_id, scope_name, status, items, closes_at)
                """)
        }
    }

    /// Whose digest an item joins: a person's app, and one team or conversation.
    struct DigestKey: Hashable, Sendable {
        let person: UUID
        let app: AppKind
        let scope: UUID
    }

    /// Takes the advisory locks of `people`'s digests, in one order (the locks' keys) so that
    /// two transactions that want the same people never wait for each other in a circle.
    static func lockDigests(of people: [UUID], tenant: UUID, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            SELECT pg_advisory_xact_lock(\(digestLockClass)::int, k.key)
            FROM (SELECT DISTINCT \(unsafeRaw: digestLockKey(tenant: "t.id", person: "p")) AS key
                  FROM unnest(\(people)::uuid[]) AS p, (SELECT \(tenant)::uuid AS id) t ORDER BY 1) k
            """)
    }

    /// Why a gathered notification waits, for history and `why`.
    static func gatheredReason(closes: Date, full: Bool, timeZone: String) -> String {
        let zone = TimeZone.named(timeZone)
        return full
            ? "digest: gathered into a digest that is full (\(DigestWindow.maximumItems) items) and is sent now"
            : "digest: gathered into the digest sent at \(DeliveryDecision.local(closes, in: zone)) (\(timeZone))"
    }

    /// Why an item joins no digest: the app showed it.
    static let shownReason = "digest: left the digest: shown in the open app (a live socket had it in the foreground)"
}
