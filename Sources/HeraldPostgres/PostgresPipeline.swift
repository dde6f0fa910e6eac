import CLibPQ

/// A statement a connection sends ahead of its next call, in the same round trip.
enum PendingStatement: Sendable {
    /// One statement without parameters (`BEGIN`, `SET LOCAL …`).
    case text(String)
    /// Program-written text that could not be split into statements: sent on its own,
    /// before the rest (simple protocol, a round trip of its own).
    case script(String)
    /// A statement whose result nobody reads (`PostgresConnection.enqueue`).
    case query(PostgresQuery)

    /// Pending statements for a script of statements separated by `;`.
    static func statements(of script: String) -> [PendingStatement] {
        guard let texts = splitStatements(script) else { return [.script(script)] }
        return texts.map { .text($0) }
    }

    /// `script`'s statements, split at the semicolons outside quotes; nil for text this
    /// splitter does not read (comments, dollar quoting, backslash escapes).
    ///
    /// Read as UTF-8 bytes: every byte it looks for is ASCII, and no byte of a multi-byte
    /// character is. (Every transaction's `BEGIN` and scope pass through here.)
    static func splitStatements(_ script: String) -> [String]? {
        var statements: [String] = []
        let bytes = script.utf8
        var start = bytes.startIndex
        var quote: UInt8?
        var previous: UInt8 = 0
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            if let open = quote {
                if byte == open { quote = nil }
            } else {
                switch byte {
                case UInt8(ascii: "'"), UInt8(ascii: "\""): quote = byte
                case UInt8(ascii: "$"), UInt8(ascii: "\\"): return nil
                case UInt8(ascii: "-") where previous == UInt8(ascii: "-"), UInt8(ascii: "*") where previous == UInt8(ascii: "/"): return nil
                case UInt8(ascii: ";"):
                    appendTrimmed(bytes[start..<index], to: &statements)
                    start = bytes.index(after: index)
                    previous = 0
                    index = start
                    continue
                default: break
                }
            }
            previous = byte
            index = bytes.index(after: index)
        }
        guard quote == nil else { return nil }
        appendTrimmed(bytes[start..<bytes.endIndex], to: &statements)
        return statements
    }

    /// Appends `text` without its leading and trailing spaces, tabs and newlines, unless
    /// nothing else is left.
    private static func appendTrimmed(_ text: Substring.UTF8View, to statements: inout [String]) {
        func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t") }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else { return }
        statements.append(String(Substring(text[first...last])))
    }
}

/// Sends several statements in one round trip with libpq's pipeline mode, and reads their
/// results in order. A failed statement makes PostgreSQL skip the rest (up to the pipeline's
/// sync); the first error is thrown once every result is read. Runs on the task that holds
/// the connection's turn.
struct PostgresPipeline {
    /// How a statement is run: prepared under a name the connection keeps, prepared now, or
    /// parsed and planned every time.
    enum Plan {
        case prepared(name: String)
        case prepare(name: String, key: PreparedStatementKey)
        case unprepared
    }

    /// One command on the wire, and what its result means.
    fileprivate enum Command {
        case text(String)
        case prepare(name: String, key: PreparedStatementKey)
        case execute(PostgresQuery, prepared: String?)
    }

    let wire: PostgresWire
    private var handle: OpaquePointer { wire.handle }

    init(wire: PostgresWire) {
        self.wire = wire
    }

    /// Runs `statements` and returns the rows of the one at `resultIndex` (the last if nil).
    /// - Parameters:
    ///   - plan: how the connection runs a query (names it keeps, or one to prepare).
    ///   - prepared: called for each statement prepared on the server.
    func run(
        _ statements: [PendingStatement], resultIndex: Int? = nil, plan: (PostgresQuery) -> Plan,
        prepared: (PreparedStatementKey, String) -> Void
    ) async throws -> PostgresRows {
        try await run(statements, resultIndices: [resultIndex ?? statements.count - 1], plan: plan, prepared: prepared)[0]
    }

    /// Runs `statements` and returns the rows of the ones at `resultIndices`, in that order.
    func run(
        _ statements: [PendingStatement], resultIndices: [Int], plan: (PostgresQuery) -> Plan,
        prepared: (PreparedStatementKey, String) -> Void
    ) async throws -> [PostgresRows] {
        guard resultIndices.allSatisfy(statements.indices.contains) else {
            throw PostgresError(kind: .unsupported, message: "the rows of a statement that is not sent were asked for", query: nil)
        }
        var commands: [Command] = []
        // For each command whose rows are returned, their place in the answer.
        var answerPlaces: [Int: Int] = [:]
        for (index, statement) in statements.enumerated() {
            defer { if let place = resultIndices.firstIndex(of: index) { answerPlaces[commands.count - 1] = place } }
            switch statement {
            case .text(let sql): commands.append(.text(sql))
            case .script(let sql):
                throw PostgresError(kind: .unsupported, message: "a script cannot be pipelined", query: String(sql.prefix(200)))
            case .query(let query):
                switch plan(query) {
                case .prepared(let name): commands.append(.execute(query, prepared: name))
                case .prepare(let name, let key):
                    commands.append(.prepare(name: name, key: key))
                    commands.append(.execute(query, prepared: name))
                case .unprepared: commands.append(.execute(query, prepared: nil))
                }
            }
        }
        guard PQenterPipelineMode(handle) == 1 else { throw wire.lost(nil) }
        defer { PQexitPipelineMode(handle) }
        for command in commands {
            guard send(command) else {
                // Nothing was flushed that the server will answer in full; the connection
                // cannot be trusted with another statement.
                throw wire.lost(nil)
            }
        }
        guard PQpipelineSync(handle) == 1 else { throw wire.lost(nil) }
        try await wire.flush()

        var firstError: PostgresError?
        var answer = [PostgresRows?](repeating: nil, count: resultIndices.count)
        for (index, command) in commands.enumerated() {
            let sqlText = command.sql
            guard let result = try await wire.nextResult() else { throw wire.lost(sqlText) }
            // Each command's results end with a NULL.
            while let extra = try await wire.nextResult() { PQclear(extra) }
            if PQresultStatus(result) == PGRES_PIPELINE_ABORTED {
                PQclear(result)
                continue
            }
            do {
                let rows = try PostgresConnection.rows(from: result, connection: handle, query: sqlText)
                if case .prepare(let name, let key) = command { prepared(key, name) }
                if let place = answerPlaces[index] { answer[place] = rows }
            } catch let error as PostgresError {
                if error.kind == .connection { throw error }
                firstError = firstError ?? error
            }
            if PQstatus(handle) != CONNECTION_OK { throw wire.lost(sqlText) }
        }
        guard let sync = try await wire.nextResult() else { throw wire.lost(nil) }
        let status = PQresultStatus(sync)
        PQclear(sync)
        guard status == PGRES_PIPELINE_SYNC else { throw wire.lost(nil) }
        if let firstError { throw firstError }
        // With no error, every statement ran and left its rows.
        return try answer.map { rows in
            guard let rows else { throw PostgresError(kind: .unsupported, message: "a statement's rows are missing", query: nil) }
            return rows
        }
    }

    private func send(_ command: Command) -> Bool {
        switch command {
        case .text(let sql):
            return PQsendQueryParams(handle, sql, 0, nil, nil, nil, nil, 0) == 1
        case .prepare(let name, let key):
            return key.types.withUnsafeBufferPointer { types in
                PQsendPrepare(handle, name, key.sql, Int32(key.types.count), types.baseAddress) == 1
            }
        case .execute(let query, let name):
            let values = query.binds.values
            let resultFormat: Int32 = query.binaryResults ? 1 : 0
            return withOptionalCStrings(values) { valuePointers in
                if let name {
                    return PQsendQueryPrepared(handle, name, Int32(values.count), valuePointers, nil, nil, resultFormat) == 1
                }
                let types = query.binds.types.map { Oid($0.rawValue) }
                return types.withUnsafeBufferPointer { typePointer in
                    PQsendQueryParams(handle, query.sql, Int32(values.count), typePointer.baseAddress, valuePointers, nil, nil, resultFormat) == 1
                }
            }
        }
    }
}

extension PostgresPipeline.Command {
    fileprivate var sql: String {
        switch self {
        case .text(let sql): sql
        case .prepare(_, let key): key.sql
        case .execute(let query, _): query.sql
        }
    }
}

/// A statement prepared on a connection: its text and its parameters' types.
struct PreparedStatementKey: Hashable, Sendable {
    let sql: String
    let types: [Oid]
}
