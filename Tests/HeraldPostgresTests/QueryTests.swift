import Foundation
import HeraldPostgres
import HeraldTestSupport
import Testing

@Suite struct QueryTests {
    @Test func interpolatedValuesBecomeBindsNotSQL() {
        let name = "x'; DROP TABLE t; --"
        let query: PostgresQuery = "SELECT * FROM t WHERE name = \(name) AND age > \(30)"
        #expect(query.sql == "SELECT * FROM t WHERE name = $1 AND age > $2")
        #expect(query.binds.values == [name, "30"])
        #expect(!query.description.contains("DROP"))
    }

    @Test func anAbsentFilterLeavesNoTraceInTheStatement() {
        let team: String? = nil
        let status: String? = "running"
        let query: PostgresQuery = "SELECT * FROM a WHERE tenant = \(1)\(and: "team =", team)\(and: "status =", status)"
        #expect(query.sql == "SELECT * FROM a WHERE tenant = $1 AND status = $2")
        #expect(query.binds.values == ["1", "running"])
    }

    @Test func hostileTextRoundTripsAsData() async throws {
        try await TestDatabase.with { pool, _ in
            try await pool.query("CREATE TABLE x (value text)")
            let hostile = "'); DROP TABLE x; --"
            try await pool.query("INSERT INTO x (value) VALUES (\(hostile))")
            let stored = try await pool.query("SELECT value FROM x").single().decode(String.self, at: 0)
            #expect(stored == hostile)
            #expect(try await pool.query("SELECT to_regclass('x') IS NOT NULL").single().decode(Bool.self, at: 0))
        }
    }

    /// PostgreSQL's text cannot hold U+0000, and libpq takes parameters as C strings: a zero
    /// is stored as U+FFFD, and nothing after it is lost, alone or in an array's element.
    @Test func aZeroInTextIsStoredAsAReplacementCharacter() async throws {
        try await TestDatabase.with { pool, _ in
            let text = "UNAVAILABLE: bad\u{0}gateway\u{0}"
            let stored = try await pool.query("SELECT \(text)::text").single().decode(String.self, at: 0)
            #expect(stored == "UNAVAILABLE: bad\u{FFFD}gateway\u{FFFD}")
            let elements = try await pool.query("SELECT \(["first", text, "last"])::text[]").single().decode([String].self, at: 0)
            #expect(elements == ["first", "UNAVAILABLE: bad\u{FFFD}gateway\u{FFFD}", "last"])
            #expect(try await pool.query("SELECT \("")::text").single().decode(String.self, at: 0) == "")
        }
    }

    @Test func connectionsRunWithoutJIT() async throws {
        try await TestDatabase.with { pool, _ in
            let jit = try await pool.withConnection { try await $0.query("SHOW jit").single().decode(String.self, at: 0) }
            #expect(jit == "off")
        }
    }

    @Test func preparedStatementsStayCorrect() async throws {
        try await TestDatabase.with { pool, _ in
            try await pool.withConnection { connection in
                try await connection.query("CREATE TEMP TABLE p (value int)")
                // The same text again and again (prepared once), then more distinct texts
                // than a connection keeps prepared (the rest are run unprepared).
                for value in 0..<5 { try await connection.query("INSERT INTO p (value) VALUES (\(value))") }
                for extra in 0..<(PostgresConnection.preparedLimit + 20) {
                    let sum = try await connection.query(
                        PostgresQuery(unsafeSQL: "SELECT sum(value)::int + \(extra) FROM p")
                    ).single().decode(Int.self, at: 0)
                    #expect(sum == 10 + extra)
                }
                // One text with parameters of different types: each runs with its own.
                #expect(try await connection.query("SELECT \(7)::text").single().decode(String.self, at: 0) == "7")
                #expect(try await connection.query("SELECT \("seven")::text").single().decode(String.self, at: 0) == "seven")
                // A statement that fails to prepare fails as it would unprepared, and the next works.
                await #expect(throws: PostgresError.self) { try await connection.query("SELECT * FROM no_such_table") }
                #expect(try await connection.query("SELECT count(*)::int FROM p").single().decode(Int.self, at: 0) == 5)
                // Plans follow the schema.
                try await connection.query("ALTER TABLE p ADD COLUMN label text DEFAULT 'x'")
                #expect(try await connection.query("SELECT count(*)::int FROM p WHERE label = 'x'").single().decode(Int.self, at: 0) == 5)
            }
        }
    }

    /// A page's statement is planned once and reused, where `LIMIT $n` was planned again on
    /// every run (PostgreSQL's plans of a prepared statement, counted by the server).
    @Test func aLimitInTheTextLetsThePlanBeReused() async throws {
        let query: PostgresQuery = "SELECT v FROM t WHERE k = \(3) ORDER BY v \(limit: 51)"
        #expect(query.sql == "SELECT v FROM t WHERE k = $1 ORDER BY v LIMIT 51")
        let negative: PostgresQuery = "SELECT 1 \(limit: -4)"
        #expect(negative.sql == "SELECT 1 LIMIT 0")
        try await TestDatabase.with { pool, _ in
            try await pool.withConnection { connection in
                try await connection.query("CREATE TEMP TABLE t (k int, v int)")
                try await connection.query("INSERT INTO t SELECT i % 10, i FROM generate_series(1, 50000) i")
                try await connection.query("CREATE INDEX ON t (v)")
                try await connection.query("ANALYZE t")
                for _ in 0..<10 {
                    #expect(try await connection.query("SELECT v FROM t WHERE k <> \(3) ORDER BY v \(limit: 51)").count == 51)
                    #expect(try await connection.query("SELECT v FROM t WHERE k <> \(3) ORDER BY v LIMIT \(51)").count == 51)
                }
                let plans = try await connection.query(
                    "SELECT statement LIKE '%LIMIT 51', generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE 'SELECT v FROM t%'"
                ).map { try $0.decode((Bool, Int, Int).self) }
                #expect(plans.count == 2)
                for (literal, generic, custom) in plans {
                    // The server plans a statement for its values five times, then compares.
                    if literal { #expect(generic == 5 && custom == 5) } else { #expect(generic == 0 && custom == 10) }
                }
            }
        }
    }

    @Test func typesRoundTrip() async throws {
        struct Payload: Codable, Equatable, Sendable {
            var title: String
            var count: Int
        }
        try await TestDatabase.with { pool, _ in
            let id = UUID()
            let when = Date(timeIntervalSince1970: 1_795_307_319.123456)
            let text = "Tom & Jerry <3 — 🔻P0🔻 👩🏽‍💻"
            let tags: [String?] = ["plain", "with \"quotes\"", "comma,brace{}", "back\\slash", "", nil, "NULL"]
            let bytes = Data([0, 1, 0xfe, 0xff])
            let row = try await pool.query(
                """
                SELECT \(id) AS id, \(when) AS at, \(text)::text AS text, \(42) AS int, \(Int32(-7)) AS small,
                       \(true) AS yes, \(2.5) AS real, \(PostgresJSON(Payload(title: "a", count: 2))) AS doc,
                       \(tags.compactMap { $0 }) AS tags, \([id, id]) AS ids, \([1, 2, 3]) AS ints, \(bytes) AS bytes,
                       \(String?.none)::text AS missing, '{a,NULL,"b c"}'::text[] AS literal
                """
            ).single()
            #expect(try row.decode(UUID.self, column: "id") == id)
            let decodedWhen = try row.decode(Date.self, column: "at")
            #expect(abs(decodedWhen.timeIntervalSince(when)) < 0.000_001)
            #expect(try row.decode(String.self, column: "text") == text)
            #expect(try row.decode(Int.self, column: "int") == 42)
            #expect(try row.decode(Int32.self, column: "small") == -7)
            #expect(try row.decode(Bool.self, column: "yes"))
            #expect(try row.decode(Double.self, column: "real") == 2.5)
            #expect(try row.decode(PostgresJSON<Payload>.self, column: "doc").value == Payload(title: "a", count: 2))
            #expect(try row.decode([String].self, column: "tags") == tags.compactMap { $0 })
            #expect(try row.decode([UUID].self, column: "ids") == [id, id])
            #expect(try row.decode([Int].self, column: "ints") == [1, 2, 3])
            #expect(try row.decode(Data.self, column: "bytes") == bytes)
            #expect(try row.decode(String?.self, column: "missing") == nil)
            #expect(try row.decode([String?].self, column: "literal") == ["a", nil, "b c"])
        }
    }

    /// A result's cells are kept in one buffer: each row reads its own, NULL and the empty
    /// text stay apart, text of several bytes a character and dates at the edges come back
    /// whole, and an id or an instant that is not one is a decoding error naming its column.
    @Test func everyRowReadsItsOwnCellsFromOneBuffer() async throws {
        try await TestDatabase.with { pool, _ in
            let rows = try await pool.query(
                """
                SELECT n, CASE WHEN n % 3 = 0 THEN NULL WHEN n % 3 = 1 THEN '' ELSE repeat('é✓', n) END AS text,
                       gen_random_uuid() AS id, CASE WHEN n = 4 THEN 'infinity'::timestamptz ELSE '2026-11-28 10:00:00.5+00'::timestamptz END AS at,
                       'not an id' AS bad
                FROM generate_series(1, 200) AS n ORDER BY n
                """)
            #expect(rows.count == 200)
            var ids = Set<UUID>()
            for (index, row) in rows.enumerated() {
                let n = index + 1
                #expect(try row.decode(Int.self, at: 0) == n)
                let text = try row.decode(String?.self, column: "text")
                #expect(text == (n % 3 == 0 ? nil : n % 3 == 1 ? "" : String(repeating: "é✓", count: n)))
                #expect(row[1] == text)
                ids.insert(try row.decode(UUID.self, column: "id"))
                let at = try row.decode(Date.self, column: "at")
                #expect(at == (n == 4 ? .distantFuture : Date(timeIntervalSince1970: 1_795_860_000.5)))
            }
            #expect(ids.count == 200)
            let error = #expect(throws: PostgresError.self) { try rows[7].decode(UUID.self, column: "bad") }
            #expect(error?.column == "bad")
            #expect(throws: PostgresError.self) { try rows[7].decode(Date.self, column: "bad") }
        }
    }

    /// JSON text bound as `jsonb[]` arrives as jsonb values, quotes, backslashes and commas
    /// included, and text that is not JSON is refused by the server.
    @Test func jsonTextBindsAsAJSONBArray() async throws {
        try await TestDatabase.with { pool, _ in
            let documents = [#"{"type":"message","say":"a \"quoted\", {braced} \\ word"}"#, #"{"n":1}"#]
            let row = try await pool.query(
                """
                SELECT pg_typeof(\(documents.map(PostgresJSONText.init)))::text, (\(documents.map(PostgresJSONText.init)))[1] ->> 'say',
                       ((\(documents.map(PostgresJSONText.init)))[2] -> 'n')::int
                """
            ).single()
            #expect(try row.decode(String.self, at: 0) == "jsonb[]")
            #expect(try row.decode(String.self, at: 1) == #"a "quoted", {braced} \ word"#)
            #expect(try row.decode(Int.self, at: 2) == 1)
            await #expect(throws: PostgresError.self) {
                _ = try await pool.query("SELECT \([PostgresJSONText("not json")])")
            }
        }
    }
    @Test func timestampsFromOtherZonesDecodeToTheSameInstant() async throws {
        try await TestDatabase.with { pool, _ in
            let row = try await pool.query(
                "SELECT '2026-11-21 23:30:00+09:30'::timestamptz AS a, '2026-11-21 14:00:00'::timestamp AS b"
            ).single()
            let expected = Date(timeIntervalSince1970: 1_795_269_600)  // 2026-11-21T14:00:00Z
            #expect(try row.decode(Date.self, column: "a") == expected)
            #expect(try row.decode(Date.self, column: "b") == expected)
        }
    }

    @Test func nullIntoANonOptionalIsADecodingError() async throws {
        try await TestDatabase.with { pool, _ in
            let row = try await pool.query("SELECT NULL::int AS n, 'abc' AS s").single()
            let error = #expect(throws: PostgresError.self) { try row.decode(Int.self, column: "n") }
            #expect(error?.kind == .decoding)
            #expect(error?.column == "n")
            #expect(throws: PostgresError.self) { try row.decode(Int.self, column: "s") }
            #expect(throws: PostgresError.self) { try row.decode(Int.self, column: "nope") }
        }
    }

    @Test func affectedRowsAreReported() async throws {
        try await TestDatabase.with { pool, _ in
            try await pool.query("CREATE TABLE n (v int)")
            let inserted = try await pool.query("INSERT INTO n SELECT generate_series(1, 5)")
            #expect(inserted.affectedRows == 5)
            let updated = try await pool.query("UPDATE n SET v = v + 1 WHERE v > \(3)")
            #expect(updated.affectedRows == 2)
            #expect(updated.commandTag == "UPDATE 2")
        }
    }

    @Test func aScriptRunsSeveralStatements() async throws {
        try await TestDatabase.with { pool, _ in
            try await pool.withConnection { connection in
                try await connection.executeScript("CREATE TABLE s (v int); INSERT INTO s VALUES (1), (2);")
            }
            #expect(try await pool.query("SELECT sum(v) FROM s").single().decode(Int.self, at: 0) == 3)
        }
    }

    @Test func aDeferredScriptRunsJustBeforeTheNextStatement() async throws {
        try await TestDatabase.with { pool, _ in
            try await pool.withConnection { connection in
                try await connection.query("CREATE TEMP TABLE d (v int)")
                // Several deferred scripts run in order, then the statement, all in one transaction.
                connection.deferScript("BEGIN")
                connection.deferScript("INSERT INTO d VALUES (1); SET LOCAL application_name = 'deferred'")
                let name = try await connection.query("SELECT current_setting('application_name')").single().decode(String.self, at: 0)
                #expect(name == "deferred")
                #expect(try await connection.query("SELECT count(*)::int FROM d").single().decode(Int.self, at: 0) == 1)
                try await connection.query("ROLLBACK")
                #expect(try await connection.query("SELECT count(*)::int FROM d").single().decode(Int.self, at: 0) == 0)
                // A failing script fails the next call, whose own statement does not run; the
                // script is gone after that.
                connection.deferScript("SELECT * FROM no_such_table")
                await #expect(throws: PostgresError.self) { try await connection.query("INSERT INTO d VALUES (2)") }
                #expect(try await connection.query("SELECT count(*)::int FROM d").single().decode(Int.self, at: 0) == 0)
            }
            // A transaction's BEGIN and setup go with its first statement; a failure rolls it all back.
            await #expect(throws: PostgresError.self) {
                try await pool.withTransaction(setup: "SET LOCAL application_name = 'tx'") { connection in
                    #expect(try await connection.query("SELECT current_setting('application_name')").single().decode(String.self, at: 0) == "tx")
                    try await connection.query("CREATE TABLE t1 (v int)")
                    try await connection.query("SELECT * FROM no_such_table")
                }
            }
            #expect(try await pool.query("SELECT to_regclass('t1') IS NULL").single().decode(Bool.self, at: 0))
            // A transaction whose body runs no statement still begins and commits cleanly.
            try await pool.withTransaction { _ in }
            #expect(try await pool.query("SELECT 1").single().decode(Int.self, at: 0) == 1)
        }
    }

    @Test func enqueuedStatementsRunInOrderWithTheNextCall() async throws {
        try await TestDatabase.with { pool, _ in
            try await pool.withConnection { connection in
                try await connection.query("CREATE TEMP TABLE e (n int, v text)")
                // The same text twice in one trip (prepared once), in order, then the call's own.
                connection.enqueue("INSERT INTO e VALUES (\(1), \("one"))")
                connection.enqueue("INSERT INTO e VALUES (\(2), \("two; with a semicolon"))")
                connection.enqueue("UPDATE e SET v = v || '!' WHERE n = \(1)")
                let rows = try await connection.query("SELECT n, v FROM e ORDER BY n")
                #expect(try rows.map { try $0.decode((Int, String).self) }.map { "\($0.0) \($0.1)" } == ["1 one!", "2 two; with a semicolon"])
                // More distinct statements than a connection keeps prepared, in one trip.
                for n in 3...(PostgresConnection.preparedLimit + 50) {
                    connection.enqueue("INSERT INTO e VALUES (\(n), \(unsafeRaw: "'n\(n)'"))")
                }
                #expect(
                    try await connection.query("SELECT count(*)::int FROM e").single().decode(Int.self, at: 0) == PostgresConnection.preparedLimit
                        + 50)
                // A failing enqueued statement fails the next call; nothing after it runs, and
                // the connection goes on.
                connection.enqueue("INSERT INTO e VALUES (\(1000), \("before"))")
                connection.enqueue("INSERT INTO no_such_table VALUES (\(1))")
                connection.enqueue("INSERT INTO e VALUES (\(1001), \("after"))")
                await #expect(throws: PostgresError.self) { try await connection.query("INSERT INTO e VALUES (\(1002), \("call"))") }
                #expect(try await connection.query("SELECT count(*)::int FROM e WHERE n >= 1000").single().decode(Int.self, at: 0) == 0)
                // discardEnqueued forgets them; deferred scripts stay.
                connection.deferScript("SET application_name = 'kept'")
                connection.enqueue("INSERT INTO e VALUES (\(2000), \("dropped"))")
                connection.discardEnqueued()
                #expect(try await connection.query("SELECT current_setting('application_name')").single().decode(String.self, at: 0) == "kept")
                #expect(try await connection.query("SELECT count(*)::int FROM e WHERE n = 2000").single().decode(Int.self, at: 0) == 0)
            }
        }
    }

    @Test func severalQueriesInOneCallEachReturnTheirOwnRows() async throws {
        try await TestDatabase.with { pool, _ in
            try await pool.withConnection { connection in
                try await connection.query("CREATE TEMP TABLE q (n int PRIMARY KEY)")
                // What waits for the next call runs first; then each query in order, each with
                // its own rows (none, one, several), a write's seen by the reads after it.
                connection.enqueue("INSERT INTO q VALUES (\(1))")
                let results = try await connection.query([
                    "SELECT n FROM q WHERE n > \(5)", "INSERT INTO q VALUES (\(2)), (\(3)) RETURNING n * \(10)", "SELECT n FROM q ORDER BY n"
                ])
                #expect(try results.map { try $0.map { try $0.decode(Int.self, at: 0) } } == [[], [20, 30], [1, 2, 3]])
                #expect(try await connection.query([]).isEmpty)
                // A failing query: its error is thrown, the ones after it do not run, and, as
                // the call is one implicit transaction outside a block, neither is the one
                // before it kept; the connection goes on.
                await #expect(throws: PostgresError.self) {
                    try await connection.query(["INSERT INTO q VALUES (\(4))", "INSERT INTO q VALUES (\(1))", "INSERT INTO q VALUES (\(5))"])
                }
                #expect(try await connection.query("SELECT array_agg(n ORDER BY n)::text FROM q").single().decode(String.self, at: 0) == "{1,2,3}")
            }
        }
    }

    @Test func aDeferredScriptIsSplitOnlyOutsideQuotesAndRunsWholeWhenItCannotBe() async throws {
        try await TestDatabase.with { pool, _ in
            try await pool.withConnection { connection in
                connection.deferScript("BEGIN; SET LOCAL application_name = 'a;b'")
                #expect(try await connection.query("SELECT current_setting('application_name')").single().decode(String.self, at: 0) == "a;b")
                try await connection.query("ROLLBACK")
                // Text around the statements, empty statements, and characters of more than
                // one byte (inside quotes and out) are kept as they were.
                connection.deferScript(" \n BEGIN ;; \t SET LOCAL herald.a = 'ü;é 😀' ;\n SET LOCAL \"herald.é\" = 'ö';  ")
                let names = try await connection.query("SELECT current_setting('herald.a'), current_setting('herald.é')").single()
                #expect(try names.decode(String.self, at: 0) == "ü;é 😀")
                #expect(try names.decode(String.self, at: 1) == "ö")
                try await connection.query("ROLLBACK")
                // Dollar quoting and comments are not split: the script runs on its own, in its place.
                connection.deferScript("CREATE TEMP TABLE w (v int)")
                connection.deferScript("DO $$ BEGIN INSERT INTO w VALUES (1); INSERT INTO w VALUES (2); END $$ -- two rows")
                connection.enqueue("INSERT INTO w VALUES (\(3))")
                #expect(try await connection.query("SELECT sum(v)::int FROM w").single().decode(Int.self, at: 0) == 6)
            }
        }
    }

    @Test func aFailedEnqueuedStatementRollsItsTransactionBackAtCommit() async throws {
        try await TestDatabase.with { pool, _ in
            try await pool.query("CREATE TABLE c (v int PRIMARY KEY)")
            await #expect(throws: PostgresError.self) {
                try await pool.withTransaction { connection in
                    try await connection.query("INSERT INTO c VALUES (1)")
                    connection.enqueue("INSERT INTO c VALUES (\(1))")
                }
            }
            #expect(try await pool.query("SELECT count(*)::int FROM c").single().decode(Int.self, at: 0) == 0)
            // What a transaction enqueued is committed with it; a body that throws drops it.
            try await pool.withTransaction { connection in
                try await connection.query("INSERT INTO c VALUES (2)")
                connection.enqueue("INSERT INTO c VALUES (\(3))")
            }
            await #expect(throws: CancellationError.self) {
                try await pool.withTransaction { connection in
                    connection.enqueue("INSERT INTO c VALUES (\(4))")
                    throw CancellationError()
                }
            }
            #expect(try await pool.query("SELECT array_agg(v ORDER BY v)::text FROM c").single().decode(String.self, at: 0) == "{2,3}")
        }
    }
}
