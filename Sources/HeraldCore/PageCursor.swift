import Foundation

/// Where the next page of a list starts: after the row with this time and id (lists are
/// ordered newest first, ties broken by id). Opaque to clients: base64url text.
public struct PageCursor: Sendable, Equatable {
    public let at: Date
    public let id: UUID

    public init(at: Date, id: UUID) {
        self.at = at
        self.id = id
    }

    /// Reads a cursor a client sent back; nil for anything else.
    public init?(token: String) {
        guard token.utf8.count <= 128, token.utf8.allSatisfy({ $0.isBase64URL }) else { return nil }
        // base64url to base64 on bytes (Foundation's `replacingOccurrences` cost a tenth of a page).
        var base64 = token.utf8.map { $0 == UInt8(ascii: "-") ? UInt8(ascii: "+") : $0 == UInt8(ascii: "_") ? UInt8(ascii: "/") : $0 }
        base64 += repeatElement(UInt8(ascii: "="), count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: Data(base64)), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: " ")
        guard parts.count == 2, let micros = Int64(parts[0]), Self.microsecondRange.contains(micros),
            let id = UUID(uuidString: String(parts[1]))
        else { return nil }
        self.init(at: Date(timeIntervalSince1970: Double(micros) / 1_000_000), id: id)
    }

    /// 0001-01-01 to 9999-12-31 in microseconds since 1970: every time Herald writes is in
    /// it, and a forged cursor outside it (year 0, `Int64.min`) is no cursor, not a time the
    /// database refuses.
    static let microsecondRange: ClosedRange<Int64> = -62_135_596_800_000_000...253_402_300_799_999_999

    /// The text a client sends back (microseconds, as PostgreSQL keeps time).
    public var token: String {
        let micros = Int64((at.timeIntervalSince1970 * 1_000_000).rounded())
        let base64 = Data("\(micros) \(id.lowercasedString)".utf8).base64EncodedData()
        return String(
            decoding: base64.compactMap { byte -> UInt8? in
                switch byte {
                case UInt8(ascii: "+"): UInt8(ascii: "-")
                case UInt8(ascii: "/"): UInt8(ascii: "_")
                case UInt8(ascii: "="): nil
                default: byte
                }
            }, as: UTF8.self)
    }
}

/// One page of a list, and where the next one starts (nil on the last page).
public struct Page<Item: Sendable>: Sendable {
    public let items: [Item]
    public let next: PageCursor?

    public init(items: [Item], next: PageCursor?) {
        self.items = items
        self.next = next
    }
}

extension UInt8 {
    fileprivate var isBase64URL: Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || self == UInt8(ascii: "-") || self == UInt8(ascii: "_")
    }
}
