import Foundation

extension UUID {
    /// A time-ordered UUID (RFC 9562 version 7): 48 bits of Unix milliseconds, then random
    /// bits. Ids made later sort later, which keeps B-tree inserts at the right edge.
    public static func v7(at date: Date = Date()) -> UUID {
        var generator = SystemRandomNumberGenerator()
        return v7(at: date, using: &generator)
    }

    /// `v7(at:)` with an injected random source, for tests.
    public static func v7<Generator: RandomNumberGenerator>(at date: Date, using generator: inout Generator) -> UUID {
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        func byte(_ shift: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: milliseconds >> shift) }
        return v7(time: (byte(40), byte(32), byte(24), byte(16), byte(8), byte(0)), random: generator.next())
    }

    /// The UUIDv7 of the 48 bits of `time` and the 64 of `random`: the 12 bits after the
    /// version are its top ones, the 62 after the variant its low ones (10 bits appear twice).
    /// 64 random bits keep ids apart within a millisecond, and take one `getrandom` call
    /// where the 74 the layout has room for took two (each attempt's id is one, `v7Sibling`).
    static func v7(time: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8), random: UInt64) -> UUID {
        func byte(_ shift: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: random >> shift) }
        return UUID(
            uuid: (
                time.0, time.1, time.2, time.3, time.4, time.5,
                0x70 | byte(60) & 0x0f, byte(52),  // version 7, then 12 random bits
                0x80 | byte(56) & 0x3f, byte(48), byte(40), byte(32), byte(24), byte(16), byte(8), byte(0)  // RFC 4122 variant
            ))
    }
}

extension UUID {
    /// The smallest UUIDv7 of the millisecond `date` falls in (every id made in it or later
    /// sorts at or after it): the bound of a range of ids by time.
    public static func v7Floor(at date: Date) -> UUID {
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        func byte(_ shift: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: milliseconds >> shift) }
        return UUID(uuid: (byte(40), byte(32), byte(24), byte(16), byte(8), byte(0), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    }

    /// The smallest UUIDv7 of the millisecond this UUIDv7 was made in.
    public var v7Floor: UUID {
        let bytes = uuid
        return UUID(uuid: (bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    }
}

extension UUID {
    /// A new UUIDv7 of the same millisecond as this one (its 48 bits of time, fresh random
    /// bits after): a child row's id that sorts, and is partitioned, with its parent.
    public func v7Sibling() -> UUID {
        var generator = SystemRandomNumberGenerator()
        let bytes = uuid
        return UUID.v7(time: (bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5), random: generator.next())
    }
}

extension UUID {
    /// `uuidString` in lower case, as RFC 9562 writes UUIDs and Herald writes every id.
    public var lowercasedString: String {
        String(unsafeUninitializedCapacity: 36) { text in
            writeLowercased(into: text, at: 0)
            return 36
        }
    }

    /// Appends `lowercasedString`'s UTF-8 (without `uuidString`'s `snprintf`, a tenth of a page
    /// of activities' CPU when it was measured), in one append.
    public func appendLowercased(to bytes: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { text in
            writeLowercased(into: text, at: 0)
            bytes.append(contentsOf: UnsafeBufferPointer(text))
        }
    }

    /// Writes `lowercasedString`'s 36 bytes into `text` from `start` (which must leave room).
    /// (Appended to an array byte by byte, each byte paid for a capacity and a uniqueness
    /// check: half of the time the API spent writing a page of activities.)
    public func writeLowercased(into text: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        precondition(start >= 0 && text.count - start >= 36, "a UUID's text needs 36 bytes")
        withUnsafeBytes(of: uuid) { octets in
            var at = start
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[at] = UInt8(ascii: "-")
                    at += 1
                }
                let octet = octets[index]
                text[at] = lowerHexDigit(octet >> 4)
                text[at + 1] = lowerHexDigit(octet & 0x0F)
                at += 2
            }
        }
    }
}

/// The lower-case hexadecimal digit of `value` (0–15): ids, and JSON's `\u00XX` escapes.
@inline(__always) func lowerHexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") - 10 + value
}
