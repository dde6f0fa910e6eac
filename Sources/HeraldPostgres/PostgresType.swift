/// A PostgreSQL type OID, as sent with bound parameters and reported for result columns.
public struct PostgresType: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Lets the server infer the type from the context (used for `String`).
    public static let unspecified = Self(rawValue: 0)
    public static let bool = Self(rawValue: 16)
    public static let bytea = Self(rawValue: 17)
    public static let int8 = Self(rawValue: 20)
    public static let int2 = Self(rawValue: 21)
    public static let int4 = Self(rawValue: 23)
    public static let text = Self(rawValue: 25)
    public static let json = Self(rawValue: 114)
    public static let float8 = Self(rawValue: 701)
    public static let boolArray = Self(rawValue: 1000)
    public static let int4Array = Self(rawValue: 1007)
    public static let textArray = Self(rawValue: 1009)
    public static let int8Array = Self(rawValue: 1016)
    public static let date = Self(rawValue: 1082)
    public static let timestamp = Self(rawValue: 1114)
    public static let timestamptz = Self(rawValue: 1184)
    public static let timestamptzArray = Self(rawValue: 1185)
    public static let uuid = Self(rawValue: 2950)
    public static let uuidArray = Self(rawValue: 2951)
    public static let jsonb = Self(rawValue: 3802)
    public static let jsonbArray = Self(rawValue: 3807)
    public static let name = Self(rawValue: 19)
    public static let bpchar = Self(rawValue: 1042)
    public static let varchar = Self(rawValue: 1043)

    /// Whether a value of this type is its text in either format (text, varchar, char, name).
    public var isText: Bool { self == .text || self == .varchar || self == .bpchar || self == .name }
}
