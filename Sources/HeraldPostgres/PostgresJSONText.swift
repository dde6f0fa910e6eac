/// JSON already written as text, bound as `jsonb` (an array of them as `jsonb[]`): the
/// server parses it once when the statement is bound, not wherever a cast appears in it.
public struct PostgresJSONText: PostgresArrayElement, Hashable {
    public var text: String
    public init(_ text: String) { self.text = text }

    public static var postgresType: PostgresType { .jsonb }
    public static var postgresArrayType: PostgresType { .jsonbArray }
    public var postgresText: String? { text }
}
