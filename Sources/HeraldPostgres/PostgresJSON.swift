import Foundation

/// A `Codable` value stored in a `jsonb` column, bound and decoded through JSON.
public struct PostgresJSON<Value: Codable & Sendable>: Sendable, PostgresEncodable, PostgresDecodable {
    public var value: Value
    public init(_ value: Value) { self.value = value }

    public static var postgresType: PostgresType { .jsonb }

    public var postgresText: String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    public init(postgresText text: String, type: PostgresType) throws {
        do {
            value = try JSONDecoder().decode(Value.self, from: Data(text.utf8))
        } catch {
            throw PostgresError(kind: .decoding, message: "cannot decode JSON as \(Value.self): \(error)")
        }
    }
}
