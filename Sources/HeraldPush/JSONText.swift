/// A small JSON writer for the push payloads, which are built once per delivery: it writes
/// UTF-8 bytes directly (no Codable boxing), keys in the order given (callers give them
/// sorted), slashes unescaped, and strings escaped exactly as JSON requires.
struct JSONText {
    private(set) var bytes: [UInt8] = []
    private var needsComma = [false]

    init(capacity: Int = 1024) {
        bytes.reserveCapacity(capacity)
    }

    mutating func openObject(_ key: String? = nil) {
        if let key { writeKey(key) } else { separate() }
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    mutating func closeObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma.removeLast()
    }

    mutating func string(_ key: String, _ value: String) {
        writeKey(key)
        writeString(value)
    }

    mutating func string(_ key: String, _ value: String?) {
        guard let value else { return }
        string(key, value)
    }

    mutating func integer(_ key: String, _ value: Int) {
        writeKey(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func boolean(_ key: String, _ value: Bool) {
        writeKey(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// `key: {k: v, …}` with the keys sorted.
    mutating func stringMap(_ key: String, _ map: [String: String]) {
        openObject(key)
        for (name, value) in map.sorted(by: { $0.key < $1.key }) { string(name, value) }
        closeObject()
    }

    private mutating func separate() {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    private mutating func writeKey(_ key: String) {
        separate()
        writeString(key)
        bytes.append(UInt8(ascii: ":"))
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func writeString(_ value: String) {
        var value = value
        value.withUTF8 { write(utf8: $0) }
    }

    private mutating func write(utf8 value: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied whole (this runs for every field of every push).
        // (Read through a buffer: walking `String.UTF8View` byte by byte was 6 % of a
        // worker's tasks in a burn-down.)
        if !value.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            bytes.append(contentsOf: value)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in value {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0..<0x20:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(Self.hex[Int(byte >> 4)])
                bytes.append(Self.hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
