import Foundation

// Cells of a result in PostgreSQL's binary format (`PostgresQuery.inBinary`): the types the
// API's hot reads return. Integers are big-endian; an instant is microseconds since
// 2000-01-01 UTC (PostgreSQL's `infinity` and `-infinity` at the ends of `Int64`).

extension PostgresDecodable {
    public static func decode(postgresBinary bytes: UnsafeBufferPointer<UInt8>?, type: PostgresType) throws -> Self {
        guard bytes == nil || type.isText else { throw PostgresBinary.unsupported(Self.self, type) }
        return try decode(postgresBytes: bytes, type: type)
    }
}

extension Optional where Wrapped: PostgresDecodable {
    public static func decode(postgresBinary bytes: UnsafeBufferPointer<UInt8>?, type: PostgresType) throws -> Self {
        guard let bytes else { return nil }
        return try Wrapped.decode(postgresBinary: bytes, type: type)
    }
}

extension UUID {
    public static func decode(postgresBinary bytes: UnsafeBufferPointer<UInt8>?, type: PostgresType) throws -> UUID {
        guard let bytes else { return try decode(postgresBytes: nil, type: type) }
        guard type == .uuid, bytes.count == 16 else { throw PostgresBinary.unsupported(UUID.self, type) }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
        return UUID(uuid: value)
    }
}

extension Int {
    public static func decode(postgresBinary bytes: UnsafeBufferPointer<UInt8>?, type: PostgresType) throws -> Int {
        try PostgresBinary.integer(bytes, type: type, as: Int.self)
    }
}

extension Int64 {
    public static func decode(postgresBinary bytes: UnsafeBufferPointer<UInt8>?, type: PostgresType) throws -> Int64 {
        try PostgresBinary.integer(bytes, type: type, as: Int64.self)
    }
}

extension Int32 {
    public static func decode(postgresBinary bytes: UnsafeBufferPointer<UInt8>?, type: PostgresType) throws -> Int32 {
        try PostgresBinary.integer(bytes, type: type, as: Int32.self)
    }
}

extension Bool {
    public static func decode(postgresBinary bytes: UnsafeBufferPointer<UInt8>?, type: PostgresType) throws -> Bool {
        guard let bytes else { return try decode(postgresBytes: nil, type: type) }
        guard type == .bool, bytes.count == 1 else { throw PostgresBinary.unsupported(Bool.self, type) }
        return bytes[0] != 0
    }
}

extension Date {
    public static func decode(postgresBinary bytes: UnsafeBufferPointer<UInt8>?, type: PostgresType) throws -> Date {
        guard let bytes else { return try decode(postgresBytes: nil, type: type) }
        guard type == .timestamptz || type == .timestamp, bytes.count == 8 else { throw PostgresBinary.unsupported(Date.self, type) }
        return PostgresBinary.instant(microsecondsSince2000: PostgresBinary.bigEndian(bytes))
    }
}

/// Reading PostgreSQL's binary format.
enum PostgresBinary {
    static func unsupported(_ swiftType: Any.Type, _ type: PostgresType) -> PostgresError {
        PostgresError(kind: .decoding, message: "cannot decode \(swiftType) from the binary format of type \(type.rawValue)")
    }

    /// `bytes` (2, 4 or 8 of them) as a signed big-endian integer.
    static func bigEndian(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64 {
        var value: UInt64 = 0
        for byte in bytes { value = value << 8 | UInt64(byte) }
        let unused = UInt64(64 - 8 * bytes.count)
        return Int64(bitPattern: value << unused) >> Int64(unused)
    }

    static func integer<Value: FixedWidthInteger & PostgresDecodable>(
        _ bytes: UnsafeBufferPointer<UInt8>?, type: PostgresType, as: Value.Type
    ) throws -> Value {
        guard let bytes else { return try Value.decode(postgresBytes: nil, type: type) }
        guard type == .int2 && bytes.count == 2 || type == .int4 && bytes.count == 4 || type == .int8 && bytes.count == 8,
            let value = Value(exactly: bigEndian(bytes))
        else { throw unsupported(Value.self, type) }
        return value
    }

    /// PostgreSQL's `1970-01-01` in its microseconds since 2000.
    private static let unixEpochInSeconds: Int64 = -946_684_800

    /// The instant, built as `PostgresTimestamp.parse` builds it from the same value's text
    /// (whole seconds, then the fraction digit by digit), so that either format gives the
    /// same `Date` to the last bit.
    static func instant(microsecondsSince2000 micros: Int64) -> Date {
        if micros == .max { return .distantFuture }
        if micros == .min { return .distantPast }
        let (quotient, remainder) = micros.quotientAndRemainder(dividingBy: 1_000_000)
        let (seconds, fractionMicros) = remainder < 0 ? (quotient - 1, remainder + 1_000_000) : (quotient, remainder)
        var fraction = 0.0
        var scale = 0.1
        var rest = fractionMicros
        var divisor: Int64 = 100_000
        while rest > 0 {
            fraction += Double(rest / divisor) * scale
            scale /= 10
            rest %= divisor
            divisor /= 10
        }
        return Date(timeIntervalSince1970: Double(seconds - unixEpochInSeconds) + fraction)
    }
}
