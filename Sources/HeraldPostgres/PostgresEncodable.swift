import Foundation

/// A Swift value that can be bound as a query parameter, in PostgreSQL's text format.
public protocol PostgresEncodable: Sendable {
    /// The parameter type sent to the server; `.unspecified` lets it infer one.
    static var postgresType: PostgresType { get }
    /// The text form of the value, or `nil` for SQL NULL.
    var postgresText: String? { get }
}

/// A value that can appear as an element of a bound array parameter.
public protocol PostgresArrayElement: PostgresEncodable {
    /// The OID of the array type whose elements are `Self`.
    static var postgresArrayType: PostgresType { get }
    /// Writes the value as one element of an array literal; by default its `postgresText`,
    /// quoted.
    func write(into literal: inout PostgresArrayText)
}

extension PostgresArrayElement {
    public func write(into literal: inout PostgresArrayText) {
        literal.append(quoting: postgresText)
    }
}

extension String: PostgresArrayElement {
    public static var postgresType: PostgresType { .unspecified }
    public static var postgresArrayType: PostgresType { .textArray }
    public var postgresText: String? { self }
}

extension Substring: PostgresEncodable {
    public static var postgresType: PostgresType { .unspecified }
    public var postgresText: String? { String(self) }
}

extension Int: PostgresArrayElement {
    public static var postgresType: PostgresType { .int8 }
    public static var postgresArrayType: PostgresType { .int8Array }
    public var postgresText: String? { String(self) }
    public func write(into literal: inout PostgresArrayText) { literal.append(unquoted: String(self)) }
}

extension Int64: PostgresArrayElement {
    public static var postgresType: PostgresType { .int8 }
    public static var postgresArrayType: PostgresType { .int8Array }
    public var postgresText: String? { String(self) }
}

extension Int32: PostgresArrayElement {
    public static var postgresType: PostgresType { .int4 }
    public static var postgresArrayType: PostgresType { .int4Array }
    public var postgresText: String? { String(self) }
}

extension Bool: PostgresArrayElement {
    public static var postgresType: PostgresType { .bool }
    public static var postgresArrayType: PostgresType { .boolArray }
    public var postgresText: String? { self ? "t" : "f" }
    public func write(into literal: inout PostgresArrayText) { literal.append(unquoted: self ? "t" : "f") }
}

extension Double: PostgresEncodable {
    public static var postgresType: PostgresType { .float8 }
    public var postgresText: String? {
        if isNaN { return "NaN" }
        if isInfinite { return self < 0 ? "-Infinity" : "Infinity" }
        return String(self)
    }
}

extension UUID: PostgresArrayElement {
    public static var postgresType: PostgresType { .uuid }
    public static var postgresArrayType: PostgresType { .uuidArray }
    public var postgresText: String? { UUIDText.format(self) }
    public func write(into literal: inout PostgresArrayText) { UUIDText.write(self, into: &literal) }
}

extension Date: PostgresArrayElement {
    public static var postgresType: PostgresType { .timestamptz }
    public static var postgresArrayType: PostgresType { .timestamptzArray }
    public var postgresText: String? { PostgresTimestamp.format(self) }
    public func write(into literal: inout PostgresArrayText) { PostgresTimestamp.write(self, into: &literal) }
}

extension Data: PostgresEncodable {
    public static var postgresType: PostgresType { .bytea }
    public var postgresText: String? {
        var text = "\\x"
        text.reserveCapacity(2 + count * 2)
        let digits = Array("0123456789abcdef")
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return text
    }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public static var postgresType: PostgresType { Wrapped.postgresType }
    public var postgresText: String? {
        switch self {
        case .none: nil
        case .some(let value): value.postgresText
        }
    }
}

extension Array: PostgresEncodable where Element: PostgresArrayElement {
    public static var postgresType: PostgresType { Element.postgresArrayType }
    public var postgresText: String? {
        var text = PostgresArrayText(count: count, width: 36)
        for element in self {
            text.next()
            element.write(into: &text)
        }
        return text.finish()
    }
}

extension Optional: PostgresArrayElement where Wrapped: PostgresArrayElement {
    public static var postgresArrayType: PostgresType { Wrapped.postgresArrayType }
    public func write(into literal: inout PostgresArrayText) {
        switch self {
        case .none: literal.append(quoting: nil)
        case .some(let value): value.write(into: &literal)
        }
    }
}
