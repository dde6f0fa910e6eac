import Foundation

/// A type written as JSON by hand, byte for byte what `HeraldJSONEncoder` writes for it, at a
/// fraction of the cost: for the objects written most
/// (the API's activity and its page of fifty; the outbox's event payload). Each conforming
/// type is checked against `HeraldJSONEncoder`'s bytes in its tests.
public protocol JSONWritable {
    func write(to writer: inout JSONWriter)
}

/// JSON text, appended to a byte buffer.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 1_024) {
        bytes.reserveCapacity(capacity)
    }

    /// Punctuation and key text the program wrote: `{"id":` and the like (ASCII, no escaping).
    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// A JSON value the program made already (an encoder's output, a column of jsonb).
    public mutating func json(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// A string value with JSON's escapes: `"`, `\`, and the control characters (`\b`,
    /// `\f`, `\n`, `\r`, `\t`, else `\u00XX`); everything else as its UTF-8, `/` included.
    public mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                start = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    bytes.append(contentsOf: [
                        UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), lowerHexDigit(byte >> 4), lowerHexDigit(byte & 0xF)
                    ])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func int(_ value: Int) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// A UUID as `HeraldJSONEncoder` writes it (lower case).
    public mutating func uuid(_ id: UUID) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 38) { text in
            text[0] = UInt8(ascii: "\"")
            id.writeLowercased(into: text, at: 1)
            text[37] = UInt8(ascii: "\"")
            bytes.append(contentsOf: UnsafeBufferPointer(text))
        }
    }

    /// An instant as `.rfc3339` writes it.
    public mutating func date(_ instant: Date) {
        string(CivilCalendar.iso8601(instant))
    }

    public mutating func value(_ value: some JSONWritable) {
        value.write(to: &self)
    }

    /// `value`'s JSON text.
    public static func text(of value: some JSONWritable) -> String {
        var writer = JSONWriter()
        writer.value(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
