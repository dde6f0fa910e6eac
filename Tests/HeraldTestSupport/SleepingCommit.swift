import HeraldPostgres

/// A `COMMIT` cut off while it runs, as a failover cuts one off: the first commit that wrote
/// to a table sleeps (in a deferred constraint trigger, which runs at `COMMIT`) until the
/// test terminates its backend; later commits do not sleep (a sequence is not rolled back
/// with its transaction).
public enum SleepingCommit {
    /// The script that makes the first commit writing to `table` sleep.
    public static func script(on table: String) -> String {
        """
        CREATE SEQUENCE \(table)_commits;
        GRANT USAGE ON SEQUENCE \(table)_commits TO PUBLIC;
        CREATE FUNCTION sleep_at_first_\(table)_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF nextval('\(table)_commits') = 1 THEN PERFORM pg_sleep(30); END IF;
            RETURN NULL;
        END $$;
        CREATE CONSTRAINT TRIGGER sleepy AFTER INSERT ON \(table) DEFERRABLE INITIALLY DEFERRED
            FOR EACH ROW EXECUTE FUNCTION sleep_at_first_\(table)_commit();
        """
    }

    /// Waits for a backend of the database to sleep in `COMMIT`, and terminates it (up to
    /// 300 s, which only keeps a broken build from hanging: a loaded machine is slow to get there).
    /// - Returns: whether one was terminated.
    @discardableResult
    public static func terminate(_ configuration: PostgresConfiguration) async throws -> Bool {
        let killer = try await PostgresConnection.connect(configuration, logger: testLogger)
        defer { Task { await killer.close() } }
        let deadline = ContinuousClock.now + .seconds(300)
        while ContinuousClock.now < deadline {
            let killed = try await killer.query(
                """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND query = 'COMMIT' AND wait_event = 'PgSleep'
                """)
            if !killed.isEmpty { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}
