import Foundation
import HeraldCore

/// A `Codable` value stored in a `jsonb` column, bound and decoded through JSON.
public struct PostgresJSON<Value: Codable & Sendable>: Sendable, PostgresEncodable, PostgresDecodable {
    public var value: Value
    public init(_ value: Value) { self.value = value }

    public static var postgresType: PostgresType { .jsonb }

    public var postgresText: String? {
        // Instants as numbers, to the microsecond (as the rows written before hold them).
        try? HeraldJSONEncoder(dates: .referenceSeconds).string(value)
    }

    public init(postgresText text: String, type: PostgresType) throws {
        do {
            value = try JSONDecoder().decode(Value.self, from: Data(text.utf8))
        } catch {
            throw PostgresError(kind: .decoding, message: "cannot decode JSON as \(Value.self): \(error)")
        }
    }
}
