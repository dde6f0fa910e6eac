/// The rows a statement returned, copied out of libpq: every cell's bytes in one buffer.
public struct PostgresRows: Sendable, RandomAccessCollection {
    /// Column names and types, shared by every row.
    public let columns: PostgresColumns
    /// The number of rows the statement touched (`INSERT`, `UPDATE`, `DELETE`, …), if reported.
    public let affectedRows: Int?
    /// The command tag, such as `INSERT 0 1`.
    public let commandTag: String
    let cells: PostgresCells

    init(columns: PostgresColumns, cells: PostgresCells, affectedRows: Int?, commandTag: String) {
        self.columns = columns
        self.cells = cells
        self.affectedRows = affectedRows
        self.commandTag = commandTag
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { columns.count == 0 ? 0 : cells.count / columns.count }

    public subscript(position: Int) -> PostgresRow {
        PostgresRow(columns: columns, cells: cells, first: position * columns.count)
    }

    /// The only row, or a decoding error naming how many there were.
    public func single() throws -> PostgresRow {
        guard count == 1 else {
            throw PostgresError(kind: .decoding, message: "expected exactly one row, got \(count)")
        }
        return self[0]
    }
}

/// A result's cells, row after row, in the text format or (`binary`) the binary one: one
/// buffer of bytes and where each cell lies in it. (A page of 50 activities has 850 cells; one `String` each was 850
/// allocations a page.)
final class PostgresCells: Sendable {
    private let bytes: [UInt8]
    /// Each cell's first byte in `bytes`, and its length; -1 for NULL.
    private let starts: [Int32]
    private let lengths: [Int32]
    /// Whether the cells are in PostgreSQL's binary format (`PostgresQuery.inBinary`), not text.
    let binary: Bool

    init(bytes: [UInt8], starts: [Int32], lengths: [Int32], binary: Bool) {
        self.bytes = bytes
        self.starts = starts
        self.lengths = lengths
        self.binary = binary
    }

    var count: Int { starts.count }

    /// Calls `body` with the cell's bytes, nil for NULL.
    func withCell<Result>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>?) throws -> Result) rethrows -> Result {
        let length = Int(lengths[index])
        guard length >= 0 else { return try body(nil) }
        let start = Int(starts[index])
        return try bytes.withUnsafeBufferPointer { buffer in
            try body(UnsafeBufferPointer(rebasing: buffer[start..<(start + length)]))
        }
    }
}

/// The names and types of a result's columns.
public final class PostgresColumns: Sendable {
    public let names: [String]
    public let types: [PostgresType]

    init(names: [String], types: [PostgresType]) {
        self.names = names
        self.types = types
    }

    public var count: Int { names.count }

    /// The first column named `name` (a result has a few dozen at most: looked up in order).
    public func index(of name: String) -> Int? { names.firstIndex(of: name) }
}

/// One row of a result.
public struct PostgresRow: Sendable {
    public let columns: PostgresColumns
    let cells: PostgresCells
    /// The row's first cell in `cells`.
    let first: Int

    /// The raw text of a column, `nil` for NULL (and, in a binary result, for a column that
    /// is not text).
    public subscript(index: Int) -> String? {
        if cells.binary && !columns.types[index].isText { return nil }
        return cells.withCell(first + index) { $0.map(postgresText(of:)) }
    }

    /// Decodes the column at `index`.
    public func decode<Value: PostgresDecodable>(_ type: Value.Type = Value.self, at index: Int) throws -> Value {
        guard index >= 0, index < columns.count else {
            throw PostgresError(kind: .decoding, message: "column \(index) out of range (\(columns.count) columns)")
        }
        do {
            let type = columns.types[index]
            if cells.binary { return try cells.withCell(first + index) { try Value.decode(postgresBinary: $0, type: type) } }
            return try cells.withCell(first + index) { try Value.decode(postgresBytes: $0, type: type) }
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
