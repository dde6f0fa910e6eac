import Foundation

/// A UUID's canonical text, `8-4-4-4-12` lowercase hex digits, written and read without
/// Foundation: a batch binds and reads thousands of them, and `UUID(uuidString:)` parses
/// with `sscanf` (a tenth of a claim's CPU, measured with `perf`).
enum UUIDText {
    private static let digits = Array("0123456789abcdef".utf8)

    static func format(_ uuid: UUID) -> String {
        String(unsafeUninitializedCapacity: 36) { write(uuid, into: $0) }
    }

    /// Writes the 36 bytes of `uuid`'s text (an element of an array literal needs no quotes).
    static func write(_ uuid: UUID, into literal: inout PostgresArrayText) {
        literal.append(reserving: 36) { write(uuid, into: $0) }
    }

    /// Writes the 36 bytes of `uuid`'s text into `text`.
    /// - Returns: 36.
    private static func write(_ uuid: UUID, into text: UnsafeMutableBufferPointer<UInt8>) -> Int {
        withUnsafeBytes(of: uuid.uuid) { bytes in
            var position = 0
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[position] = UInt8(ascii: "-")
                    position += 1
                }
                text[position] = digits[Int(byte >> 4)]
                text[position + 1] = digits[Int(byte & 0x0f)]
                position += 2
            }
            return position
        }
    }

    /// The UUID the text spells in canonical form (either case), else `nil`.
    static func parse(_ text: String) -> UUID? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    /// `parse(_:)` on the text's UTF-8 bytes (a result's cell, as libpq holds it).
    static func parse(bytes: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard bytes.count == 36, bytes[8] == dash, bytes[13] == dash, bytes[18] == dash, bytes[23] == dash else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        // Every digit's value looked up in a table, the invalid ones marked by their high
        // bit and checked once at the end (a fan-out's part reads thousands of ids).
        let invalid = withUnsafeMutableBytes(of: &value) { output -> UInt8 in
            nibbles.withUnsafeBufferPointer { table in
                var invalid: UInt8 = 0
                for (index, position) in digitPositions.enumerated() {
                    let high = table[Int(bytes[position])]
                    let low = table[Int(bytes[position + 1])]
                    invalid |= high | low
                    output[index] = high << 4 | low & 0x0f
                }
                return invalid
            }
        }
        return invalid & 0x80 == 0 ? UUID(uuid: value) : nil
    }

    private static let dash = UInt8(ascii: "-")

    /// Where each byte's two digits begin in the text.
    private static let digitPositions = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34]

    /// Each byte's value as a hex digit (either case); 0x80 for a byte that is not one.
    private static let nibbles: [UInt8] = {
        var table = [UInt8](repeating: 0x80, count: 256)
        for (value, digit) in "0123456789abcdef".utf8.enumerated() { table[Int(digit)] = UInt8(value) }
        for (value, digit) in "ABCDEF".utf8.enumerated() { table[Int(digit)] = UInt8(10 + value) }
        return table
    }()
}
