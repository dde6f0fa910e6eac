import Foundation
import HeraldPostgres
import HeraldTestSupport
import Testing

/// `PostgresQuery.inBinary`: the same rows, in PostgreSQL's binary format, decode to the
/// same values as from its text, instants to the last bit.
@Suite struct BinaryResultsTests {
    @Test func everyTypeReadInBinaryDecodesAsFromText() async throws {
        try await TestDatabase.with { pool, _ in
            let query: PostgresQuery = """
                SELECT gen_random_uuid() AS id, 'Tom & Jerry <3 — 🔻P0🔻'::text AS text, ''::varchar AS empty,
                       (-7)::int2 AS small, 2147483647::int4 AS int4, (-9007199254740993)::int8 AS int8, true AS yes, false AS no,
                       NULL::uuid AS missing, NULL::int4 AS nothing,
                       '2026-11-28 10:00:00.5+00'::timestamptz AS half, 'infinity'::timestamptz AS future, '-infinity'::timestamptz AS past,
                       '1999-12-31 23:59:59.000001+00'::timestamptz AS before2000, '1969-07-20 20:17:40.05+00'::timestamptz AS before1970
                """
            let text = try await pool.query(query).single()
            let binary = try await pool.query(query.inBinary).single()
            #expect(try binary.decode(String.self, column: "text") == text.decode(String.self, column: "text"))
            #expect(try binary.decode(String.self, column: "empty") == "")
            #expect(try binary.decode(Int32.self, column: "small") == -7)
            #expect(try binary.decode(Int.self, column: "small") == -7)
            #expect(try binary.decode(Int.self, column: "int4") == 2_147_483_647)
            #expect(try binary.decode(Int64.self, column: "int8") == -9_007_199_254_740_993)
            #expect(try binary.decode(Bool.self, column: "yes") && !binary.decode(Bool.self, column: "no"))
            #expect(try binary.decode(UUID?.self, column: "missing") == nil)
            #expect(try binary.decode(Int?.self, column: "nothing") == nil)
            for column in ["half", "future", "past", "before2000", "before1970"] {
                #expect(try binary.decode(Date.self, column: column) == text.decode(Date.self, column: column), "\(column)")
            }
            #expect(try binary.decode(Date.self, column: "future") == .distantFuture)
            // An int8 that does not fit an Int32 is an error, not a wrapped value.
            #expect(throws: PostgresError.self) { try binary.decode(Int32.self, column: "int8") }
        }
    }

    /// Instants to the microsecond, either side of 1970 and 2000: the same `Date` from both
    /// formats, and the same ids.
    @Test func instantsAndIdsAreTheSameInBothFormats() async throws {
        try await TestDatabase.with { pool, _ in
            try await pool.query(
                """
                CREATE TABLE samples AS
                SELECT n, gen_random_uuid() AS id,
                       timestamptz '1960-01-01 00:00:00+00' + (random() * 3e9)::int8 * interval '1 second' + (random() * 1e6)::int8 * interval '1 microsecond' AS at
                FROM generate_series(1, 2000) AS n
                """)
            let query: PostgresQuery = "SELECT n, id, at FROM samples ORDER BY n"
            let text = try await pool.query(query)
            let binary = try await pool.query(query.inBinary)
            #expect(text.count == 2000 && binary.count == 2000)
            for (textRow, binaryRow) in zip(text, binary) {
                #expect(try binaryRow.decode(Int.self, at: 0) == textRow.decode(Int.self, at: 0))
                #expect(try binaryRow.decode(UUID.self, at: 1) == textRow.decode(UUID.self, at: 1))
                let (fromBinary, fromText) = (try binaryRow.decode(Date.self, at: 2), try textRow.decode(Date.self, at: 2))
                #expect(fromBinary == fromText, "\(String(describing: textRow[2]))")
            }
        }
    }

    /// A type without a binary reader is a decoding error naming its column; the raw text of a
    /// binary row is there for its text columns only.
    @Test func aTypeWithoutABinaryReaderIsADecodingError() async throws {
        try await TestDatabase.with { pool, _ in
            let row = try await pool.query(("SELECT 2.5::float8 AS real, 'plain'::text AS label, gen_random_uuid() AS id" as PostgresQuery).inBinary)
                .single()
            let error = #expect(throws: PostgresError.self) { try row.decode(Double.self, column: "real") }
            #expect(error?.kind == .decoding && error?.column == "real")
            #expect(row[1] == "plain")
            #expect(row[2] == nil)
        }
    }
}
