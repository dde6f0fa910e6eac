/// Checks that bytes are one JSON text exactly as RFC 8259 writes it, before Foundation
/// parses them: Foundation's parser also takes trailing commas (`{"text": "x",}`), comments
/// and other JSON5 forms, and the API promises `400` for anything that is not JSON.
/// It builds nothing; nesting deeper than `maxDepth` is refused too.
struct JSONSyntax {
    static let maxDepth = 64

    private let bytes: [UInt8]
    private var index = 0

    /// Whether `bytes` hold one JSON value with nothing but whitespace around it.
    static func isValid(_ bytes: [UInt8]) -> Bool {
        var checker = JSONSyntax(bytes: bytes)
        guard checker.value(depth: 0) else { return false }
        checker.skipWhitespace()
        return checker.index == bytes.count
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard current == byte else { return false }
        index += 1
        return true
    }

    private mutating func value(depth: Int) -> Bool {
        skipWhitespace()
        switch current {
        case UInt8(ascii: "{"): return object(depth: depth + 1)
        case UInt8(ascii: "["): return array(depth: depth + 1)
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        default: return number()
        }
    }

    private mutating func object(depth: Int) -> Bool {
        guard depth <= Self.maxDepth else { return false }
        index += 1
        skipWhitespace()
        if take(UInt8(ascii: "}")) { return true }
        while true {
            skipWhitespace()
            guard string() else { return false }
            skipWhitespace()
            guard take(UInt8(ascii: ":")), value(depth: depth) else { return false }
            skipWhitespace()
            if take(UInt8(ascii: "}")) { return true }
            guard take(UInt8(ascii: ",")) else { return false }
        }
    }

    private mutating func array(depth: Int) -> Bool {
        guard depth <= Self.maxDepth else { return false }
        index += 1
        skipWhitespace()
        if take(UInt8(ascii: "]")) { return true }
        while true {
            guard value(depth: depth) else { return false }
            skipWhitespace()
            if take(UInt8(ascii: "]")) { return true }
            guard take(UInt8(ascii: ",")) else { return false }
        }
    }

    private mutating func string() -> Bool {
        guard take(UInt8(ascii: "\"")) else { return false }
        while let byte = current {
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return true
            case UInt8(ascii: "\\"):
                guard let escaped = current else { return false }
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"):
                    for _ in 0..<4 {
                        guard let hex = current, hex.isHexDigit else { return false }
                        index += 1
                    }
                default: return false
                }
            case 0x00..<0x20: return false
            default: continue
            }
        }
        return false
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() -> Bool {
        _ = take(UInt8(ascii: "-"))
        if take(UInt8(ascii: "0")) {
        } else {
            guard let first = current, (0x31...0x39).contains(first) else { return false }
            digits()
        }
        if take(UInt8(ascii: ".")) {
            guard digits() else { return false }
        }
        if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
            if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
            guard digits() else { return false }
        }
        return true
    }

    /// One or more digits; whether there was one.
    @discardableResult
    private mutating func digits() -> Bool {
        let start = index
        while let byte = current, (0x30...0x39).contains(byte) { index += 1 }
        return index > start
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool { (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self) }
}
