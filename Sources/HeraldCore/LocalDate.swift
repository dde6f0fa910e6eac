import Foundation

/// A calendar date with no time or zone, such as a deadline: `2026-11-28`.
public struct LocalDate: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Parses strict `YYYY-MM-DD`, refusing dates the calendar lacks (`2026-02-30`).
    public init?(_ text: String) {
        // On the UTF-8 bytes: every activity a page reads parses its deadline.
        var text = text
        let parts = text.withUTF8 { bytes -> (Int, Int, Int)? in
            guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
            func number(_ range: Range<Int>) -> Int? {
                var value = 0
                for index in range {
                    let digit = bytes[index] &- UInt8(ascii: "0")
                    guard digit < 10 else { return nil }
                    value = value * 10 + Int(digit)
                }
                return value
            }
            guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) else { return nil }
            return (year, month, day)
        }
        guard let (year, month, day) = parts else { return nil }
        self.init(year: year, month: month, day: day)
    }

    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1, day <= Self.days(inMonth: month, of: year) else {
            return nil
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The day `instant` falls on in `timeZone`.
    public init(_ instant: Date, in timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: instant)
        self.year = parts.year ?? 1970
        self.month = parts.month ?? 1
        self.day = parts.day ?? 1
    }

    public var description: String {
        guard (0...9999).contains(year) else {
            return "\(CivilCalendar.padded(Int64(year), 4))-\(CivilCalendar.padded(Int64(month), 2))-\(CivilCalendar.padded(Int64(day), 2))"
        }
        return String(unsafeUninitializedCapacity: 10) { text in
            CivilCalendar.writeDigits(Int64(year), width: 4, into: text, at: 0)
            text[4] = UInt8(ascii: "-")
            CivilCalendar.writeDigits(Int64(month), width: 2, into: text, at: 5)
            text[7] = UInt8(ascii: "-")
            CivilCalendar.writeDigits(Int64(day), width: 2, into: text, at: 8)
            return 10
        }
    }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    /// Days from 1970-01-01 to this date in the proleptic Gregorian calendar (`CivilCalendar`).
    public var daysSince1970: Int {
        Int(CivilCalendar.days(year: Int64(year), month: Int64(month), day: Int64(day)))
    }

    static func days(inMonth month: Int, of year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let date = LocalDate(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a YYYY-MM-DD date: \(text)"))
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
