import Foundation

extension LiveBench {
    /// What a phase cost herald, PostgreSQL and this client (`measure`), and how long it took.
    struct Cost {
        let seconds: Double
        let server: Double
        let client: Double
        let postgres: Double?
        /// What PostgreSQL's log grew by (pg_stat_wal), when it could be read.
        let walBytes: Int64?

        func perItem(_ count: Int, _ item: String) -> String {
            let per = 1_000 / Double(max(1, count))
            let a = "aeiou".contains(item.prefix(1)) ? "an" : "a"
            return "  CPU: herald \(format(server)) s (\(format(server * per)) ms \(a) \(item)), PostgreSQL "
                + (postgres.map { "\(format($0)) s (\(format($0 * per)) ms \(a) \(item))" } ?? "n/a")
                + ", this client \(format(client)) s (\(format(client * per)) ms \(a) \(item)) over \(format(seconds)) s"
                + (walBytes.map { "; WAL \(Int64(Double($0) / Double(max(1, count)))) bytes \(a) \(item)" } ?? "")
        }
    }
}
