import HeraldCore

/// Rows printed as aligned columns under a header, for people to read.
struct TextTable {
    let headers: [String]
    var rows: [[String]] = []

    init(_ headers: String...) {
        self.headers = headers
    }

    /// Adds a row; each cell is one line, its control characters (newlines too) escaped.
    mutating func add(_ cells: String...) { add(cells) }

    /// Adds a row of cells made at run time.
    mutating func add(_ cells: [String]) {
        rows.append(cells.map { TerminalText.escaped($0, .singleLine) })
    }

    /// The table, or `empty` when there are no rows.
    func render(empty: String) -> String {
        guard !rows.isEmpty else { return empty }
        var widths = headers.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }.joined(separator: "  ")
        }
        return ([line(headers)] + rows.map(line)).joined(separator: "\n")
    }
}
