import Foundation
import HeraldPostgres

/// Statistics for the plans the dispatcher keeps (docs/operating/database.md, "Statistics of
/// young tables").
extension DeliveryQueue {
    /// `Store.analyzeYoungTables`, on the dispatcher's pool.
    @discardableResult
    public func analyzeYoungTables() async throws -> [String] {
        try await Store.analyzeYoungTables(on: pool)
    }
}
