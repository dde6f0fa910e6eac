import Foundation
import HeraldPostgres
import HeraldStore
import HeraldTestSupport
import Testing

@Suite struct MigratorTests {
    func write(_ files: [String: String], to directory: URL) throws {
        for (name, sql) in files {
            try sql.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
    }

    @Test func migrationsApplyInVersionOrderNotFileOrder() async throws {
        try await withTemporaryDirectory { directory in
            // 0010 depends on 0009, which depends on 0001: any other order fails.
            try write(
                [
                    "0010_add_age.sql": "ALTER TABLE people ADD COLUMN age int;",
                    "0001_people.sql": "CREATE TABLE people (name text);",
                    "0009_add_email.sql": "ALTER TABLE people ADD COLUMN email text;",
                    "README.md": "not a migration"
                ], to: directory)
            let migrator = Migrator(migrations: try Migration.load(directory: directory))
            #expect(migrator.migrations.map(\.version) == [1, 9, 10])
            try await TestDatabase.with { pool, _ in
                let applied = try await migrator.migrate(pool, logger: testLogger)
                #expect(applied.map(\.fileName) == ["0001_people.sql", "0009_add_email.sql", "0010_add_age.sql"])
                let columns = try await pool.query(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = 'people' ORDER BY ordinal_position"
                ).map { try $0.decode(String.self, at: 0) }
                #expect(columns == ["name", "email", "age"])
                #expect(try await migrator.migrate(pool, logger: testLogger).isEmpty)
                let status = try await migrator.status(pool)
                #expect(status.allSatisfy { $0.appliedAt != nil })
                try await migrator.verify(pool)
            }
        }
    }

    @Test func aChangedAppliedMigrationIsRefused() async throws {
        try await TestDatabase.with { pool, _ in
            let original = Migrator(migrations: [Migration(version: 1, name: "people", sql: "CREATE TABLE people (name text);")])
            try await original.migrate(pool, logger: testLogger)
            let edited = Migrator(migrations: [
                Migration(version: 1, name: "people", sql: "CREATE TABLE people (name text, age int);"),
                Migration(version: 2, name: "more", sql: "CREATE TABLE more (x int);")
            ])
            let error = await #expect(throws: MigrationError.self) { try await edited.migrate(pool, logger: testLogger) }
            #expect(error?.isChecksumMismatch == true)
            #expect(error?.description.contains("0001_people.sql") == true)
            // Nothing after the refusal was applied.
            #expect(try await pool.query("SELECT to_regclass('more') IS NULL").single().decode(Bool.self, at: 0))
        }
    }

    @Test func aFailingMigrationIsRolledBackAndNamed() async throws {
        try await TestDatabase.with { pool, _ in
            let migrator = Migrator(migrations: [
                Migration(version: 1, name: "good", sql: "CREATE TABLE good (x int);"),
                Migration(version: 2, name: "bad", sql: "CREATE TABLE half (x int); SELEKT nonsense;")
            ])
            let error = await #expect(throws: MigrationError.self) { try await migrator.migrate(pool, logger: testLogger) }
            #expect(error?.description.contains("0002_bad.sql") == true)
            #expect(try await pool.query("SELECT to_regclass('good') IS NOT NULL").single().decode(Bool.self, at: 0))
            #expect(try await pool.query("SELECT to_regclass('half') IS NULL").single().decode(Bool.self, at: 0))
            let status = try await migrator.status(pool)
            #expect(status.map { $0.appliedAt != nil } == [true, false])
            let pending = await #expect(throws: MigrationError.self) { try await migrator.verify(pool) }
            #expect(pending?.isPending == true)
        }
    }

    @Test func concurrentRunnersApplyEachMigrationOnce() async throws {
        try await TestDatabase.with { _, configuration in
            // Each migration fails if it runs twice, so a race would surface as an error.
            let migrator = Migrator(
                migrations: (1...5).map {
                    Migration(version: $0, name: "step\($0)", sql: "CREATE TABLE step\($0) (x int); SELECT pg_sleep(0.05);")
                })
            let counts = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        let pool = PostgresPool(configuration: configuration, size: 1, logger: testLogger)
                        let count = try await migrator.migrate(pool, logger: testLogger).count
                        await pool.close()
                        return count
                    }
                }
                var counts: [Int] = []
                for try await count in group { counts.append(count) }
                return counts
            }
            #expect(counts.reduce(0, +) == 5)
            let pool = PostgresPool(configuration: configuration, size: 1, logger: testLogger)
            let recorded = try await pool.query("SELECT count(*) FROM herald_migrations").single().decode(Int.self, at: 0)
            await pool.close()
            #expect(recorded == 5)
        }
    }

    @Test func anUnknownAppliedMigrationIsRefused() async throws {
        try await TestDatabase.with { pool, _ in
            let newer = Migrator(migrations: [
                Migration(version: 1, name: "a", sql: "SELECT 1;"), Migration(version: 2, name: "b", sql: "SELECT 2;")
            ])
            try await newer.migrate(pool, logger: testLogger)
            let older = Migrator(migrations: [Migration(version: 1, name: "a", sql: "SELECT 1;")])
            let error = await #expect(throws: MigrationError.self) { try await older.migrate(pool, logger: testLogger) }
            #expect(error?.description.contains("0002_b") == true)
        }
    }

    @Test(arguments: ["1_short.sql", "0001.sql", "0001_.sql", "abcd_name.sql", "0001_name.txt"])
    func badFileNamesAreRefused(name: String) {
        #expect(throws: MigrationError.self) { try Migration(fileName: name, sql: "") }
    }

    @Test func twoFilesWithOneVersionAreRefused() async throws {
        try await withTemporaryDirectory { directory in
            try write(["0001_a.sql": "SELECT 1;", "0001_b.sql": "SELECT 2;"], to: directory)
            #expect(throws: MigrationError.self) { try Migration.load(directory: directory) }
        }
    }

    @Test func theBundledMigrationsMatchSQLFolderAndApply() async throws {
        let bundled = try Migration.bundled
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("sql")
        #expect(bundled == (try Migration.load(directory: folder)))
        #expect(!bundled.isEmpty)
        try await TestDatabase.with { pool, _ in
            let applied = try await Migrator(migrations: bundled).migrate(pool, logger: testLogger)
            #expect(applied.count == bundled.count)
            // Every role the code works as exists once they ran, and a session can take it.
            for role in DatabaseRole.allCases {
                let user = try await pool.withTransaction(setup: role.forTransaction) { connection in
                    try await connection.query("SELECT current_user::text").single().decode(String.self, at: 0)
                }
                #expect(user == role.rawValue)
            }
        }
    }
}
