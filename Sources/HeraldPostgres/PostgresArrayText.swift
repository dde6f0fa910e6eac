/// The text of an array parameter being written, `{a,"b c",NULL}`: its elements go in as
/// bytes, one after another, with no string of their own (an acknowledgement binds sixteen
/// arrays of a batch's length, and a string per UUID or timestamp was most of building it).
public struct PostgresArrayText {
    private var bytes: [UInt8] = []

    /// Room for `count` elements of about `width` bytes each.
    init(count: Int, width: Int) {
        bytes.reserveCapacity(2 + count * (width + 1))
        bytes.append(UInt8(ascii: "{"))
    }

    /// The literal, closed.
    consuming func finish() -> String {
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Starts the next element (the comma between elements).
    mutating func next() {
        // Past the opening brace, an element was written (none is written as nothing).
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
    }

    /// Appends `text` quoted, its quotes and backslashes escaped; `NULL` for `nil`.
    public mutating func append(quoting text: String?) {
        guard let text else { return bytes.append(contentsOf: "NULL".utf8) }
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
            bytes.append(byte)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends what `fill` writes into room for `count` bytes (no more); it returns how many
    /// it wrote. For text that is written whole, quotes included.
    mutating func append(reserving count: Int, _ fill: (UnsafeMutableBufferPointer<UInt8>) -> Int) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: count))
        let written = bytes.withUnsafeMutableBufferPointer { fill(UnsafeMutableBufferPointer(rebasing: $0[start...])) }
        bytes.removeLast(count - written)
    }

    /// Appends ASCII text that needs no quotes (numbers, `t`, `f`).
    mutating func append(unquoted text: String) {
        bytes.append(contentsOf: text.utf8)
    }
}
