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
        return text.withUTF8 { bytes -> UUID? in
            guard bytes.count == 36 else { return nil }
            var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let parsed = withUnsafeMutableBytes(of: &value) { output -> Bool in
                var position = 0
                for index in 0..<16 {
                    if position == 8 || position == 13 || position == 18 || position == 23 {
                        guard bytes[position] == UInt8(ascii: "-") else { return false }
                        position += 1
                    }
                    guard let high = nibble(bytes[position]), let low = nibble(bytes[position + 1]) else { return false }
                    output[index] = high << 4 | low
                    position += 2
                }
                return true
            }
            return parsed ? UUID(uuid: value) : nil
        }
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
