import Foundation
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The schema stays ready to be sharded by tenant on Citus (docs/architecture.md): every table is
/// keyed by `tenant_id` first, or is one of the few documented reference tables, and no SQL
/// statement in the code joins rows of one tenant to rows of another.
struct CitusReadySchemaTests {
    /// Tables that are not tenant data: small, shared, replicated whole to every node as
    /// reference tables. Every other table is distributed on `tenant_id`.
    static let referenceTables: Set<String> = [
        "tenants",  // the tenants themselves
        "provider_pauses",  // a worker's pause of a provider, across tenants
        "herald_migrations",  // the schema's own version
        "live_servers",  // the herald serve processes holding live sockets
        "live_horizon",  // how far the live feed was pruned
        "webhook_cursor",  // how far the webhooks' feeder has read the feed
        "email_link_keys"  // the key every process signs and checks unsubscribe links with
    ]

    @Test func everyKeyStartsWithTheTenant() async throws {
        try await TestDatabase.withStore { store, _ in
            let rows = try await store.pool.query(
                """
                SELECT t.relname, c.conname, c.contype::text,
                       (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = c.conrelid AND a.attnum = c.conkey[1])::text,
                       coalesce(r.relname::text, ''),
                       coalesce((SELECT a.attname FROM pg_attribute a WHERE a.attrelid = c.confrelid AND a.attnum = c.confkey[1])::text, '')
                FROM pg_constraint c
                JOIN pg_class t ON t.oid = c.conrelid
                LEFT JOIN pg_class r ON r.oid = c.confrelid
                WHERE c.contype IN ('p', 'u', 'f') AND t.relnamespace = 'public'::regnamespace AND NOT t.relispartition
                ORDER BY 1, 2
                """)
            var tables: Set<String> = []
            for row in rows {
                let (table, name, type, first, referenced, referencedFirst) = try row.decode((String, String, String, String, String, String).self)
                tables.insert(table)
                guard !Self.referenceTables.contains(table) else { continue }
                #expect(first == "tenant_id", "\(table).\(name) (\(type)) starts with \(first), not tenant_id")
                if type == "f", !Self.referenceTables.contains(referenced) {
                    #expect(referencedFirst == "tenant_id", "\(table).\(name) references \(referenced) by \(referencedFirst) first")
                }
            }
            // Unique indexes that back no constraint hold to the same rule.
            let uniqueIndexes = try await store.pool.query(
                """
                SELECT t.relname::text, x.relname::text, a.attname::text
                FROM pg_index i
                JOIN pg_class t ON t.oid = i.indrelid
                JOIN pg_class x ON x.oid = i.indexrelid
                JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = i.indkey[0]
                WHERE i.indisunique AND t.relnamespace = 'public'::regnamespace AND NOT t.relispartition
                """
            ).map { try $0.decode((String, String, String).self) }
            for (table, index, first) in uniqueIndexes where !Self.referenceTables.contains(table) {
                #expect(first == "tenant_id", "unique index \(index) on \(table) starts with \(first), not tenant_id")
            }
            // Every table has a primary key (Citus distributes by it), and the check saw the whole schema.
            let withoutKey = try await store.pool.query(
                """
                SELECT t.relname::text FROM pg_class t
                WHERE t.relnamespace = 'public'::regnamespace AND t.relkind IN ('r', 'p') AND NOT t.relispartition
                  AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conrelid = t.oid AND c.contype = 'p')
                """
            ).map { try $0.decode(String.self, at: 0) }
            #expect(withoutKey.isEmpty, "tables without a primary key: \(withoutKey)")
            #expect(tables.isSuperset(of: ["notifications", "deliveries", "delivery_attempts", "outbox", "activities", "people"]))
        }
    }

    @Test func noStatementJoinsAcrossTenants() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources").standardized
        let tenantTables = try Self.tenantTables(sql: sources.deletingLastPathComponent().appendingPathComponent("sql"))
        #expect(tenantTables.contains("deliveries") && tenantTables.contains("people"))
        var checked = 0
        var offenders: [String] = []
        let files =
            FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for join in SQLJoins.find(in: text) where tenantTables.contains(join.table) {
                checked += 1
                if !join.condition.contains("\(join.alias).tenant_id") {
                    offenders.append("\(file.lastPathComponent): JOIN \(join.table) \(join.alias) ON \(join.condition)")
                }
            }
        }
        #expect(checked > 25, "found only \(checked) joins: the scan no longer reads the code's SQL")
        #expect(offenders.isEmpty, "joins of tenant tables without the tenant in their condition:\n\(offenders.joined(separator: "\n"))")
    }

    /// Every table the migrations create, but the reference tables.
    static func tenantTables(sql folder: URL) throws -> Set<String> {
        var tables: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil) where file.pathExtension == "sql" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("CREATE TABLE ") {
                let name = line.dropFirst("CREATE TABLE ".count).prefix { $0.isLetter || $0 == "_" }
                if !name.isEmpty { tables.insert(String(name)) }
            }
        }
        return tables.subtracting(referenceTables)
    }
}

/// `JOIN table alias ON condition` in source text (the condition up to the next clause).
enum SQLJoins {
    struct Join {
        let table: String
        let alias: String
        let condition: String
    }

    static let clauseEnds = ["JOIN", "WHERE", "GROUP", "ORDER", "LIMIT", "RETURNING", "UNION", "LEFT", "CROSS", "FULL", "INNER", "SELECT", "FOR"]

    static func find(in text: String) -> [Join] {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
        var joins: [Join] = []
        var index = 0
        while index + 3 < words.count {
            defer { index += 1 }
            guard words[index] == "JOIN" else { continue }
            var cursor = index + 1
            if words[cursor] == "LATERAL" { continue }
            let table = words[cursor]
            cursor += 1
            if words[cursor] == "AS" { cursor += 1 }
            guard cursor + 1 < words.count, words[cursor + 1] == "ON" else { continue }
            let alias = words[cursor]
            var condition: [String] = []
            var depth = 0
            cursor += 2
            scan: while cursor < words.count {
                let word = words[cursor]
                if depth == 0, clauseEnds.contains(word) || word.hasPrefix("\"\"\"") { break }
                for character in word {
                    if character == "(" { depth += 1 }
                    if character == ")" {
                        depth -= 1
                        if depth < 0 { break scan }
                    }
                }
                condition.append(word)
                cursor += 1
            }
            joins.append(Join(table: table, alias: alias, condition: condition.joined(separator: " ")))
        }
        return joins
    }
}
