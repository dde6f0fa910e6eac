/// The rows a statement returned, copied out of libpq into Swift values.
public struct PostgresRows: Sendable, RandomAccessCollection {
    /// Column names and types, shared by every row.
    public let columns: PostgresColumns
    /// The number of rows the statement touched (`INSERT`, `UPDATE`, `DELETE`, …), if reported.
    public let affectedRows: Int?
    /// The command tag, such as `INSERT 0 1`.
    public let commandTag: String
    let cells: [String?]

    init(columns: PostgresColumns, cells: [String?], affectedRows: Int?, commandTag: String) {
        self.columns = columns
        self.cells = cells
        self.affectedRows = affectedRows
        self.commandTag = commandTag
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { columns.count == 0 ? 0 : cells.count / columns.count }

    public subscript(position: Int) -> PostgresRow {
        let width = columns.count
        return PostgresRow(columns: columns, cells: cells[(position * width)..<((position + 1) * width)])
    }

    /// The only row, or a decoding error naming how many there were.
    public func single() throws -> PostgresRow {
        guard count == 1 else {
            throw PostgresError(kind: .decoding, message: "expected exactly one row, got \(count)")
        }
        return self[0]
    }
}

/// The names and types of a result's columns.
public struct PostgresColumns: Sendable {
    public let names: [String]
    public let types: [PostgresType]
    private let indexByName: [String: Int]

    init(names: [String], types: [PostgresType]) {
        self.names = names
        self.types = types
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() where index[name] == nil {
            index[name] = position
        }
        indexByName = index
    }

    public var count: Int { names.count }

    public func index(of name: String) -> Int? { indexByName[name] }
}

/// One row of a result.
public struct PostgresRow: Sendable {
    public let columns: PostgresColumns
    let cells: ArraySlice<String?>

    /// The raw text of a column, `nil` for NULL.
    public subscript(index: Int) -> String? { cells[cells.startIndex + index] }

    /// Decodes the column at `index`.
    public func decode<Value: PostgresDecodable>(_ type: Value.Type = Value.self, at index: Int) throws -> Value {
        guard index >= 0, index < columns.count else {
            throw PostgresError(kind: .decoding, message: "column \(index) out of range (\(columns.count) columns)")
        }
        do {
            return try Value.decode(postgresText: self[index], type: columns.types[index])
        } catch var error as PostgresError {
            error.column = columns.names[index]
            error.message += " in column \"\(columns.names[index])\""
            throw error
        }
    }

    /// Decodes the column named `name`.
    public func decode<Value: PostgresDecodable>(_ type: Value.Type = Value.self, column name: String) throws -> Value {
        guard let index = columns.index(of: name) else {
            throw PostgresError(kind: .decoding, message: "no column named \"\(name)\"")
        }
        return try decode(type, at: index)
    }

    /// Decodes the leading columns as a tuple: `let (id, name) = try row.decode((UUID, String).self)`.
    public func decode<each Value: PostgresDecodable>(_ types: (repeat each Value).Type) throws -> (repeat each Value) {
        var index = 0
        func next<Column: PostgresDecodable>(_ type: Column.Type) throws -> Column {
            defer { index += 1 }
            return try decode(type, at: index)
        }
        return (repeat try next((each Value).self))
    }
}
