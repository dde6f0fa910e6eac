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
        let random = generator.next() as UInt64
        let more = generator.next() as UInt64
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for shift in stride(from: 40, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: milliseconds >> UInt64(shift))) }
        bytes.append(0x70 | UInt8(truncatingIfNeeded: random >> 8) & 0x0f)  // version 7
        bytes.append(UInt8(truncatingIfNeeded: random))
        bytes.append(0x80 | UInt8(truncatingIfNeeded: more >> 56) & 0x3f)  // RFC 4122 variant
        for shift in stride(from: 48, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: more >> UInt64(shift))) }
        return UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
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
        let random = generator.next() as UInt64, more = generator.next() as UInt64
        let bytes = uuid
        func byte(_ value: UInt64, _ shift: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: value >> shift) }
        return UUID(uuid: (
            bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5,
            0x70 | byte(random, 8) & 0x0f, byte(random, 0),  // version 7
            0x80 | byte(more, 56) & 0x3f, byte(more, 48), byte(more, 40), byte(more, 32),  // RFC 4122 variant
            byte(more, 24), byte(more, 16), byte(more, 8), byte(more, 0)
        ))
    }
}
