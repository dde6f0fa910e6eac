import Foundation
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldStore

@Suite struct TenantDeletionTests {
    /// Every foreign key has an index that leads with the key's columns, so that checking it
    /// for one deleted row finds the referencing rows by the whole key, not by the tenant alone;
    /// and it restricts deletes, so the check is one lookup.
    @Test func everyForeignKeyIsIndexedAndRestrictsDeletes() async throws {
        try await TestDatabase.withStore { store, _ in
            let unindexed = try await store.pool.query(
                """
                SELECT c.conname FROM pg_constraint c
                WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace
                  AND NOT EXISTS (
                    SELECT 1 FROM pg_index i
                    WHERE i.indrelid = c.conrelid
                      AND ARRAY(SELECT unnest((string_to_array(i.indkey::text, ' ')::int2[])[1:cardinality(c.conkey)]) ORDER BY 1)
                          = ARRAY(SELECT unnest(c.conkey) ORDER BY 1))
                ORDER BY 1
                """
            ).map { try $0.decode(String.self, at: 0) }
            #expect(unindexed == [])
            // RESTRICT, not NO ACTION: one lookup per deleted row instead of two.
            let lenient = try await store.pool.query(
                "SELECT conname FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace AND confdeltype <> 'r' ORDER BY 1"
            ).map { try $0.decode(String.self, at: 0) }
            #expect(lenient == [])
        }
    }

    /// Deleting a tenant makes PostgreSQL check every deleted row's foreign keys one row at a
    /// time, with statements its connection keeps planned. Planned from statistics that do not
    /// describe the tenant (a queue analyzed while it held a few retried deliveries), each
    /// check was planned anew for every row, or scanned the whole referencing table for every
    /// row: minutes for 100,000 deliveries. Under the deletion's settings each check is one
    /// plan, made once, on an index — whatever the statistics say.
    @Test func everyForeignKeyCheckOfATenantDeletionIsOneIndexedPlan() async throws {
        try await TestDatabase.withStore { store, _ in
            let keys = try await store.pool.query(
                """
                SELECT c.conrelid::regclass::text,
                       array_agg(quote_ident(a.attname) ORDER BY k.ord)::text,
                       array_agg(format_type(a.atttypid, a.atttypmod) ORDER BY k.ord)::text,
                       (SELECT t.relkind = 'p' FROM pg_class t WHERE t.oid = c.conrelid)
                FROM pg_constraint c
                CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY k (attnum, ord)
                JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
                -- A partitioned table's key, not its copies on each partition.
                WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace AND c.conparentid = 0
                GROUP BY c.oid, c.conrelid
                """
            ).map { try $0.decode((String, String, String, Bool).self) }
            #expect(keys.count > 10)
            for (table, columnList, typeList, partitioned) in keys {
                let columns = columnList.trimmingCharacters(in: CharacterSet(charactersIn: "{}")).split(separator: ",")
                let types = typeList.trimmingCharacters(in: CharacterSet(charactersIn: "{}")).split(separator: ",")
                // The statement PostgreSQL's referential-integrity trigger runs for each deleted
                // row of the referenced table (ri_triggers.c, ri_restrict).
                let conditions = columns.enumerated().map { "$\($0.offset + 1) OPERATOR(pg_catalog.=) \($0.element)" }
                // (A partitioned table is read whole: its partitions hold the rows.)
                let check = "SELECT 1 FROM \(partitioned ? "" : "ONLY ")\(table) x WHERE \(conditions.joined(separator: " AND ")) FOR KEY SHARE OF x"
                let arguments = types.map { $0 == "uuid" ? "'\(UUID())'" : "NULL" }.joined(separator: ", ")
                let plan = try await store.pool.withTransaction(setup: Store.bulkDeletionSettings) { connection in
                    try await connection.query("PREPARE fk_check (\(unsafeRaw: types.joined(separator: ", "))) AS \(unsafeRaw: check)")
                    // Left to itself, PostgreSQL plans the first executions for their values, and
                    // keeps doing so for as long as the statistics make a generic plan look worse.
                    let lines = try await connection.query("EXPLAIN EXECUTE fk_check (\(unsafeRaw: arguments))")
                        .map { try $0.decode(String.self, at: 0) }
                    try await connection.query("DEALLOCATE fk_check")
                    return lines.joined(separator: "\n")
                }
                #expect(!plan.contains("Seq Scan"), "\(check)\n\(plan)")
                #expect(plan.contains("Index Cond"), "\(check)\n\(plan)")
                // A generic plan: the parameters stay parameters.
                #expect(plan.contains("$1"), "\(check)\n\(plan)")
            }
        }
    }

    /// A deleted tenant leaves no row behind in any table with a tenant: its people, chat,
    /// activities and what their triggers wrote (the count of departures, sql/0046); another
    /// tenant keeps all of its own.
    @Test func aDeletedTenantLeavesNoRowInAnyTable() async throws {
        try await TestDatabase.withStore { store, _ in
            let (acme, group) = try await ChatAccessTests.crew(store)
            let globex = try await WorkflowFixture.make(store, slug: "globex")
            for fixture in [acme, globex] { _ = try await fixture.assign() }
            _ = try await acme.run {
                try await $0.sendMessage(actor: "alice@acme.test", conversation: group, text: "hello", clientID: nil, sentAt: nil)
            }
            _ = try await acme.run { try await $0.removeMembership(team: "ops", email: "chidi@acme.test") }
            _ = try await globex.run { try await $0.removeMembership(team: "ops", email: "dana@acme.test") }

            func rows(of tenant: UUID) async throws -> [String: Int] {
                let tables = try await store.pool.query(
                    """
                    SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
                    WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
                      AND a.attname = 'tenant_id' AND NOT a.attisdropped
                    ORDER BY 1
                    """
                ).map { try $0.decode(String.self, at: 0) }
                var found: [String: Int] = [:]
                for table in tables {
                    let count = try await store.pool.query("SELECT count(*)::int FROM \(identifier: table) WHERE tenant_id = \(tenant)")
                    if let count = try count.first?.decode(Int.self, at: 0), count > 0 { found[table] = count }
                }
                return found
            }
            let globexBefore = try await rows(of: globex.tenant.id)
            #expect(globexBefore["presence_departures"] == 1 && globexBefore["people"] ?? 0 > 0, "\(globexBefore)")
            #expect(try await rows(of: acme.tenant.id)["messages"] ?? 0 > 0)

            try await store.deleteTenant(slug: "acme")
            #expect(try await rows(of: acme.tenant.id) == [:])
            #expect(try await rows(of: globex.tenant.id) == globexBefore)
        }
    }
}
