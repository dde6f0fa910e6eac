import CLibPQ
import Foundation

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
        // Every cell's bytes into one buffer: its size first, then the copies.
        let cellCount = rowCount * columnCount
        var starts = [Int32](repeating: -1, count: cellCount)
        var lengths = [Int32](repeating: -1, count: cellCount)
        var size = 0
        for row in 0..<Int32(rowCount) {
            for column in 0..<Int32(columnCount) where PQgetisnull(result, row, column) == 0 {
                let cell = Int(row) * columnCount + Int(column)
                let length = PQgetlength(result, row, column)
                starts[cell] = Int32(size)
                lengths[cell] = length
                size += Int(length)
            }
        }
        guard size <= Int(Int32.max) else {
            throw PostgresError(kind: .unsupported, message: "a result of \(size) bytes is more than 2 GiB", query: query)
        }
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            if let base = buffer.baseAddress {
                for cell in 0..<cellCount where lengths[cell] > 0 {
                    // (libpq answers NULL only for a cell outside the result.)
                    if let value = PQgetvalue(result, Int32(cell / columnCount), Int32(cell % columnCount)) {
                        memcpy(base + Int(starts[cell]), value, Int(lengths[cell]))
                    } else {
                        memset(base + Int(starts[cell]), 0, Int(lengths[cell]))
                    }
                }
            }
            initialized = size
        }
        let tag = String(cString: PQcmdStatus(result))
        let affected = Int(String(cString: PQcmdTuples(result)))
        return PostgresRows(
            columns: PostgresColumns(names: names, types: types),
            cells: PostgresCells(bytes: bytes, starts: starts, lengths: lengths, binary: columnCount > 0 && PQfformat(result, 0) == 1),
            affectedRows: affected, commandTag: tag)
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
