import Foundation
import HeraldPostgres

/// Statistics for the plans the dispatcher keeps (docs/operating/database.md, "Statistics of
/// young tables").
extension DeliveryQueue {
    /// Tables analyzed by `analyzeYoungTables` once they changed at least this often (and more
    /// than they held when last analyzed).
    public static let youngTableChanges = 1_000

    /// Analyzes every table that has changed more than it held when last analyzed, and at
    /// least `youngTableChanges` times (a new database, a table a clean-up emptied): the plans
    /// the connections keep are then made again from statistics that know its rows. Nothing
    /// when another worker is at it, and no table autovacuum has in hand.
    /// - Returns: the tables it analyzed.
    @discardableResult
    public func analyzeYoungTables() async throws -> [String] {
        try await pool.query("SELECT herald_analyze_young_tables(\(Self.youngTableChanges))").map { try $0.decode(String.self, at: 0) }
    }
}
