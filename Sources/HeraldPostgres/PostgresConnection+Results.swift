import CLibPQ

extension PostgresConnection {
    /// A libpq result as rows (and clears it), or the error it reports; no result at all is a
    /// lost connection.
    static func rows(from result: OpaquePointer?, connection: OpaquePointer, query: String?) throws -> PostgresRows {
        guard let result else {
            let reason = String(cString: PQerrorMessage(connection)).trimmingTrailingNewlines()
            throw PostgresError(kind: .connection, message: firstLine(of: reason), query: query)
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            break
        case PGRES_FATAL_ERROR, PGRES_BAD_RESPONSE, PGRES_NONFATAL_ERROR:
            throw errorFrom(result: result, connection: connection, query: query)
        default:
            throw PostgresError(
                kind: .unsupported, message: "unsupported result status \(String(cString: PQresStatus(PQresultStatus(result))))", query: query)
        }
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        var names: [String] = []
        var types: [PostgresType] = []
        names.reserveCapacity(columnCount)
        types.reserveCapacity(columnCount)
        for column in 0..<Int32(columnCount) {
            names.append(String(cString: PQfname(result, column)))
            types.append(PostgresType(rawValue: UInt32(PQftype(result, column))))
        }
        var cells: [String?] = []
        cells.reserveCapacity(rowCount * columnCount)
        for row in 0..<Int32(rowCount) {
            for column in 0..<Int32(columnCount) {
                if PQgetisnull(result, row, column) == 1 {
                    cells.append(nil)
                } else {
                    cells.append(String(cString: PQgetvalue(result, row, column)))
                }
            }
        }
        let tag = String(cString: PQcmdStatus(result))
        let affected = Int(String(cString: PQcmdTuples(result)))
        return PostgresRows(
            columns: PostgresColumns(names: names, types: types), cells: cells, affectedRows: affected, commandTag: tag)
    }

    static func errorFrom(result: OpaquePointer?, connection: OpaquePointer, query: String?) -> PostgresError {
        func field(_ code: Character) -> String? {
            guard let result, let value = PQresultErrorField(result, Int32(code.asciiValue ?? 0)) else { return nil }
            return String(cString: value)
        }
        let sqlState = field("C")
        let message = field("M") ?? firstLine(of: String(cString: PQerrorMessage(connection)).trimmingTrailingNewlines())
        let lostConnection = PQstatus(connection) != CONNECTION_OK
        return PostgresError(
            kind: lostConnection || sqlState == nil ? .connection : .server,
            message: message.isEmpty ? "the connection to PostgreSQL was lost" : message,
            sqlState: sqlState,
            detail: field("D"),
            hint: field("H"),
            constraint: field("n"),
            table: field("t"),
            column: field("c"),
            query: query
        )
    }
}
