import HeraldCore
import HeraldPostgres

extension PostgresQuery.StringInterpolation {
    /// ` AND` the row of `table` (an alias the program wrote: `a`, `h`) comes after `cursor`
    /// in newest-first order (`created_at DESC, id DESC`); nothing without a cursor.
    mutating func appendInterpolation(after cursor: PageCursor?, in table: String) {
        guard let cursor else { return }
        appendLiteral(" AND (\(table).created_at, \(table).id) < (")
        appendInterpolation(cursor.at)
        appendLiteral(", ")
        appendInterpolation(cursor.id)
        appendLiteral(")")
    }
}
