import Foundation

/// A Swift value that can be read from a result column in PostgreSQL's text format.
public protocol PostgresDecodable: Sendable {
    /// Decodes a non-NULL value.
    init(postgresText text: String, type: PostgresType) throws
    /// Decodes a value that may be NULL; the default refuses NULL.
    static func decode(postgresText text: String?, type: PostgresType) throws -> Self
    /// Decodes a cell from its bytes as libpq holds them (nil for NULL); the default goes
    /// through `decode(postgresText:type:)`, the types read most read the bytes themselves.
    static func decode(postgresBytes bytes: UnsafeBufferPointer<UInt8>?, type: PostgresType) throws -> Self
    /// Decodes a cell of a result in the binary format (`PostgresQuery.inBinary`; nil for
    /// NULL). The default reads the text types; the other types that have one say so in
    /// PostgresDecodable+Binary.swift.
    static func decode(postgresBinary bytes: UnsafeBufferPointer<UInt8>?, type: PostgresType) throws -> Self
}

extension PostgresDecodable {
    public static func decode(postgresText text: String?, type: PostgresType) throws -> Self {
        guard let text else {
            throw PostgresError(kind: .decoding, message: "unexpected NULL for \(Self.self)")
        }
        return try Self(postgresText: text, type: type)
    }

    public static func decode(postgresBytes bytes: UnsafeBufferPointer<UInt8>?, type: PostgresType) throws -> Self {
        try decode(postgresText: bytes.map(postgresText(of:)), type: type)
    }
}

/// A cell's bytes as text (libpq's text is UTF-8: the connection's client encoding).
func postgresText(of bytes: UnsafeBufferPointer<UInt8>) -> String {
    String(decoding: bytes, as: UTF8.self)
}

func decodingFailure<T>(_ type: T.Type, _ text: String) -> PostgresError {
    // Only the first characters: the value may be user data.
    PostgresError(kind: .decoding, message: "cannot decode \(T.self) from \"\(text.prefix(32))\"")
}

extension String: PostgresDecodable {
    public init(postgresText text: String, type: PostgresType) throws { self = text }
}

extension Int: PostgresDecodable {
    public init(postgresText text: String, type: PostgresType) throws {
        guard let value = Int(text) else { throw decodingFailure(Int.self, text) }
        self = value
    }
}

extension Int64: PostgresDecodable {
    public init(postgresText text: String, type: PostgresType) throws {
        guard let value = Int64(text) else { throw decodingFailure(Int64.self, text) }
        self = value
    }
}

extension Int32: PostgresDecodable {
    public init(postgresText text: String, type: PostgresType) throws {
        guard let value = Int32(text) else { throw decodingFailure(Int32.self, text) }
        self = value
    }
}

extension Double: PostgresDecodable {
    public init(postgresText text: String, type: PostgresType) throws {
        switch text {
        case "NaN": self = .nan
        case "Infinity": self = .infinity
        case "-Infinity": self = -.infinity
        default:
            guard let value = Double(text) else { throw decodingFailure(Double.self, text) }
            self = value
        }
    }
}

extension Bool: PostgresDecodable {
    public init(postgresText text: String, type: PostgresType) throws {
        switch text {
        case "t", "true": self = true
        case "f", "false": self = false
        default: throw decodingFailure(Bool.self, text)
        }
    }
}

extension UUID: PostgresDecodable {
    public init(postgresText text: String, type: PostgresType) throws {
        guard let value = UUIDText.parse(text) else { throw decodingFailure(UUID.self, text) }
        self = value
    }

    public static func decode(postgresBytes bytes: UnsafeBufferPointer<UInt8>?, type: PostgresType) throws -> UUID {
        guard let bytes, let value = UUIDText.parse(bytes: bytes) else {
            return try decode(postgresText: bytes.map(postgresText(of:)), type: type)
        }
        return value
    }
}

extension Date: PostgresDecodable {
    public init(postgresText text: String, type: PostgresType) throws {
        guard let value = PostgresTimestamp.parse(text) else { throw decodingFailure(Date.self, text) }
        self = value
    }

    public static func decode(postgresBytes bytes: UnsafeBufferPointer<UInt8>?, type: PostgresType) throws -> Date {
        guard let bytes, let value = PostgresTimestamp.parse(bytes: bytes) else {
            return try decode(postgresText: bytes.map(postgresText(of:)), type: type)
        }
        return value
    }
}

extension Data: PostgresDecodable {
    public init(postgresText text: String, type: PostgresType) throws {
        guard text.hasPrefix("\\x") else { throw decodingFailure(Data.self, text) }
        let hex = Array(text.utf8.dropFirst(2))
        guard hex.count % 2 == 0 else { throw decodingFailure(Data.self, text) }
        var bytes = [UInt8]()
        bytes.reserveCapacity(hex.count / 2)
        var index = 0
        while index < hex.count {
            guard let high = hexValue(hex[index]), let low = hexValue(hex[index + 1]) else {
                throw decodingFailure(Data.self, text)
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        self = Data(bytes)
    }
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public init(postgresText text: String, type: PostgresType) throws {
        self = .some(try Wrapped(postgresText: text, type: type))
    }

    public static func decode(postgresText text: String?, type: PostgresType) throws -> Self {
        guard let text else { return nil }
        return try Wrapped(postgresText: text, type: type)
    }

    public static func decode(postgresBytes bytes: UnsafeBufferPointer<UInt8>?, type: PostgresType) throws -> Self {
        guard let bytes else { return nil }
        return try Wrapped.decode(postgresBytes: bytes, type: type)
    }
}

extension Array: PostgresDecodable where Element: PostgresDecodable {
    public init(postgresText text: String, type: PostgresType) throws {
        guard let elements = PostgresArrayLiteral.parse(text) else { throw decodingFailure([Element].self, text) }
        self = try elements.map { try Element.decode(postgresText: $0, type: .unspecified) }
    }
}
