import Foundation

extension JSONEncoder {
    /// How Herald writes its objects wherever they leave it (the API, webhooks): RFC 3339
    /// times, keys in sorted order, `/` unescaped.
    public static func herald() -> JSONEncoder {
        let encoder = JSONEncoder()
        // RFC 3339 in the proleptic Gregorian calendar (`.iso8601` writes years before 1582
        // in the Julian calendar).
        encoder.dateEncodingStrategy = .rfc3339
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
