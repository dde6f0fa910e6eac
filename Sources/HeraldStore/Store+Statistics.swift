import Foundation
import HeraldPostgres

/// Statistics for the plans connections keep (docs/operating/database.md, "Statistics of young
/// tables"): every long-running process that writes asks for them — the dispatcher, the
/// webhooks' sender and the live hub of `herald serve` — so that whichever runs keeps the
/// tables it uses known to the planner.
extension Store {
    /// Tables analyzed by `analyzeYoungTables` once they changed at least this often (and more
    /// than they held when last analyzed).
    public static let youngTableChanges = 1_000

    /// How often the long-running loops ask for it.
    public static let youngTablesCheckEvery: Duration = .seconds(5)

    /// Analyzes every table that has changed more than it held when last analyzed, and at
    /// least `youngTableChanges` times (a new database, a table a clean-up emptied): the plans
    /// the connections keep are then made again from statistics that know its rows. Nothing
    /// when another process is at it, and no table autovacuum has in hand.
    /// - Returns: the tables it analyzed.
    @discardableResult
    public func analyzeYoungTables() async throws -> [String] {
        try await Self.analyzeYoungTables(on: pool)
    }

    static func analyzeYoungTables(on pool: PostgresPool) async throws -> [String] {
        try await pool.query("SELECT herald_analyze_young_tables(\(youngTableChanges))").map { try $0.decode(String.self, at: 0) }
    }
}
