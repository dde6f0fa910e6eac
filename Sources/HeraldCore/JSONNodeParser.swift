/// Reads JSON (RFC 8259) into a `JSONNode` tree, byte by byte: what every frame an app sends
/// on the live channel is read with (`LiveClientFrame.parse`). Foundation's decoder built the
/// same tree by trying each type in turn, and each miss threw an error: a `presence.subscribe`
/// of fifty names cost 150 errors, a tenth of `herald serve`'s work in a reconnect storm
/// (docs/operating/scaling.md).
///
/// Numbers keep the text they were written with (one beyond a double's range is refused); a key
/// written twice keeps its first value, as Foundation's does; nesting deeper than
/// `JSONNode.maxDepth` is refused, so that no input reaches the stack's end.
struct JSONNodeParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The one value the bytes hold, with nothing but white space around it; nil if they hold none.
    mutating func document() -> JSONNode? {
        skipSpace()
        guard let node = value(depth: 0) else { return nil }
        skipSpace()
        return index == bytes.count ? node : nil
    }

    private var next: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        while let byte = next, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func value(depth: Int) -> JSONNode? {
        guard let byte = next else { return nil }
        switch byte {
        case UInt8(ascii: "{"): return object(depth: depth + 1)
        case UInt8(ascii: "["): return array(depth: depth + 1)
        case UInt8(ascii: "\""): return string().map(JSONNode.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return nil
        }
    }

    private mutating func object(depth: Int) -> JSONNode? {
        guard depth <= JSONNode.maxDepth else { return nil }
        index += 1
        var members: [String: JSONNode] = [:]
        skipSpace()
        if next == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard next == UInt8(ascii: "\""), let key = string() else { return nil }
            skipSpace()
            guard next == UInt8(ascii: ":") else { return nil }
            index += 1
            skipSpace()
            guard let member = value(depth: depth) else { return nil }
            if members[key] == nil { members[key] = member }
            skipSpace()
            switch next {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: return nil
            }
        }
    }

    private mutating func array(depth: Int) -> JSONNode? {
        guard depth <= JSONNode.maxDepth else { return nil }
        index += 1
        var items: [JSONNode] = []
        skipSpace()
        if next == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipSpace()
            guard let item = value(depth: depth) else { return nil }
            items.append(item)
            skipSpace()
            switch next {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(items)
            default: return nil
            }
        }
    }

    private mutating func literal(_ word: StaticString, _ node: JSONNode) -> JSONNode? {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return nil }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return nil }
        index += count
        return node
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, as written.
    private mutating func number() -> JSONNode? {
        let start = index
        if next == UInt8(ascii: "-") { index += 1 }
        guard let first = next, Self.isDigit(first) else { return nil }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if next == UInt8(ascii: ".") {
            index += 1
            guard let digit = next, Self.isDigit(digit) else { return nil }
            skipDigits()
        }
        if next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
            index += 1
            if next == UInt8(ascii: "+") || next == UInt8(ascii: "-") { index += 1 }
            guard let digit = next, Self.isDigit(digit) else { return nil }
            skipDigits()
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        // Beyond a double's range (`1e999`): refused, as Foundation refuses it.
        guard Double(text)?.isFinite == true else { return nil }
        return .number(text)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = next, Self.isDigit(byte) { index += 1 }
    }

    /// A string from its opening quote: copied whole when it has no escape (most do).
    private mutating func string() -> String? {
        index += 1
        let start = index
        while let byte = next {
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index - 1]), as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { return nil }
            index += 1
        }
        guard next != nil else { return nil }
        var utf8 = Array(bytes[start..<index])
        while let byte = next {
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escaped = next else { return nil }
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = escapedScalar() else { return nil }
                    UTF8.encode(scalar) { utf8.append($0) }
                default: return nil
                }
            default:
                guard byte >= 0x20 else { return nil }
                utf8.append(byte)
            }
        }
        return nil
    }

    /// The scalar of `\uXXXX` (after its `u`), or of a surrogate pair `\uD83D\uDE00`; nil for
    /// a lone surrogate.
    private mutating func escapedScalar() -> Unicode.Scalar? {
        guard let unit = hex4() else { return nil }
        switch unit {
        case 0xD800...0xDBFF:
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return nil }
            index += 2
            guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
        case 0xDC00...0xDFFF:
            return nil
        default:
            return Unicode.Scalar(unit)
        }
    }

    private mutating func hex4() -> UInt32? {
        guard bytes.count - index >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}

extension JSONNode {
    /// The deepest nesting of arrays and objects `parse` reads.
    public static let maxDepth = 64

    /// The JSON value `text` holds (`JSONNodeParser`), or nil if it holds none.
    public static func parse(_ text: String) -> JSONNode? {
        var text = text
        return text.withUTF8 { bytes in
            var parser = JSONNodeParser(bytes)
            return parser.document()
        }
    }
}
