import Foundation
import HeraldPostgres
import HeraldTestSupport
import Testing

@Suite struct ErrorTests {
    @Test func aUniqueViolationIsTypedWithItsSQLStateAndConstraint() async throws {
        try await TestDatabase.with { pool, _ in
            try await pool.query("CREATE TABLE people (email text CONSTRAINT people_email_key UNIQUE)")
            try await pool.query("INSERT INTO people VALUES (\("secret@example.com"))")
            let error = await #expect(throws: PostgresError.self) {
                try await pool.query("INSERT INTO people VALUES (\("secret@example.com"))")
            }
            #expect(error?.isUniqueViolation == true)
            #expect(error?.sqlState == "23505")
            #expect(error?.constraint == "people_email_key")
            #expect(error?.table == "people")
            #expect(error?.kind == .server)
            // The detail quotes the value: it is kept for debugging, out of the description.
            #expect(error?.detail?.contains("secret@example.com") == true)
            #expect(error.map { "\($0)" }?.contains("secret") == false)
            #expect(error?.debugDescription.contains("secret@example.com") == true)
        }
    }

    @Test func otherConstraintViolationsAreRecognised() async throws {
        try await TestDatabase.with { pool, _ in
            try await pool.query(
                """
                CREATE TABLE parents (id int PRIMARY KEY);
                """)
            try await pool.query("CREATE TABLE kids (parent int REFERENCES parents, age int NOT NULL CHECK (age >= 0))")
            let foreignKey = await #expect(throws: PostgresError.self) { try await pool.query("INSERT INTO kids VALUES (1, 1)") }
            #expect(foreignKey?.isForeignKeyViolation == true)
            let check = await #expect(throws: PostgresError.self) { try await pool.query("INSERT INTO kids VALUES (NULL, -1)") }
            #expect(check?.isCheckViolation == true)
            let notNull = await #expect(throws: PostgresError.self) { try await pool.query("INSERT INTO kids VALUES (NULL, NULL)") }
            #expect(notNull?.isNotNullViolation == true)
        }
    }

    @Test func aSyntaxErrorCarriesItsSQLState() async throws {
        try await TestDatabase.with { pool, _ in
            let error = await #expect(throws: PostgresError.self) { try await pool.query("SELEKT 1") }
            #expect(error?.sqlState == "42601")
            #expect(error?.isConnectionFailure == false)
        }
    }

    @Test func aBadConnectionStringIsRefusedBeforeConnecting() {
        let error = #expect(throws: PostgresError.self) { try PostgresConfiguration("host=x port") }
        #expect(error?.kind == .invalidConfiguration)
    }

    @Test func anUnreachableServerIsAConnectionErrorWithoutThePassword() async throws {
        let configuration = try PostgresConfiguration("postgresql://someone:hunter2@127.0.0.1:1/db", connectTimeout: 2)
        let error = await #expect(throws: PostgresError.self) {
            _ = try await PostgresConnection.connect(configuration, logger: testLogger)
        }
        #expect(error?.kind == .connection)
        #expect(error?.isConnectionFailure == true)
        #expect(error.map { "\($0)" }?.contains("hunter2") == false)
        #expect(configuration.redacted.contains("hunter2") == false)
    }
}
