/// PostgreSQL's text form of one-dimensional arrays, `{a,"b c",NULL}`, read (an array
/// parameter is written by `PostgresArrayText`).
enum PostgresArrayLiteral {
    /// Parses a one-dimensional array; `nil` when the text is not one.
    static func parse(_ text: String) -> [String?]? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    /// Byte by byte: the quotes, braces, commas and backslashes that shape an array are ASCII,
    /// and no byte of a multi-byte UTF-8 character is. (Character by character, appending
    /// each to a string of its own, parsing the 2,000 ids of a part of a large group's
    /// recipients was the largest piece of the worker's CPU while it wrote the part.)
    private static func parse(bytes text: UnsafeBufferPointer<UInt8>) -> [String?]? {
        var start = 0
        var end = text.count
        // An explicit lower bound, such as `[0:1]={a,b}`, is skipped.
        if start < end, text[start] == UInt8(ascii: "[") {
            guard let equals = text.firstIndex(of: UInt8(ascii: "=")) else { return nil }
            start = equals + 1
        }
        guard end - start >= 2, text[start] == UInt8(ascii: "{"), text[end - 1] == UInt8(ascii: "}") else { return nil }
        start += 1
        end -= 1
        var elements: [String?] = []
        if start == end { return elements }

        var current: [UInt8] = []
        var quoted = false
        var wasQuoted = false
        var index = start
        while index < end {
            let byte = text[index]
            index += 1
            if quoted {
                switch byte {
                case UInt8(ascii: "\\"):
                    guard index < end else { return nil }
                    current.append(text[index])
                    index += 1
                case UInt8(ascii: "\""): quoted = false
                default: current.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                quoted = true
                wasQuoted = true
            case UInt8(ascii: "\\"):
                guard index < end else { return nil }
                current.append(text[index])
                index += 1
            case UInt8(ascii: "{"), UInt8(ascii: "}"):
                return nil  // nested arrays are not supported
            case UInt8(ascii: ","):
                elements.append(element(current, wasQuoted))
                current.removeAll(keepingCapacity: true)
                wasQuoted = false
            default:
                current.append(byte)
            }
        }
        if quoted { return nil }
        elements.append(element(current, wasQuoted))
        return elements
    }

    /// An element's text; an unquoted one without its surrounding spaces, and `nil` when
    /// it is `NULL` (in any case).
    private static func element(_ bytes: [UInt8], _ wasQuoted: Bool) -> String? {
        if wasQuoted { return String(decoding: bytes, as: UTF8.self) }
        var lower = 0
        var upper = bytes.count
        while lower < upper, bytes[lower] == UInt8(ascii: " ") { lower += 1 }
        while upper > lower, bytes[upper - 1] == UInt8(ascii: " ") { upper -= 1 }
        let trimmed = bytes[lower..<upper]
        if trimmed.count == 4, zip(trimmed, "null".utf8).allSatisfy({ $0 | 0x20 == $1 }) { return nil }
        return String(decoding: trimmed, as: UTF8.self)
    }
}
