import Foundation

/// Calendar arithmetic in the proleptic Gregorian calendar: the Gregorian rules for every
/// year, as ISO 8601, RFC 3339 and PostgreSQL use them. Foundation's `.gregorian` calendar
/// and its ISO 8601 formatter switch to the Julian calendar before 15 October 1582, which
/// moved `0001-01-01` to year 0 and `1582-10-10` to `1582-10-20`. (Howard Hinnant's
/// days-from-civil algorithms.)
public enum CivilCalendar {
    /// Days from 1970-01-01 to the given day (month 1-12, day 1-31).
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The day `days` after 1970-01-01.
    public static func date(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// `instant` in UTC as RFC 3339 to the second, `2026-11-22T09:30:00Z` (what
    /// `JSONEncoder`'s `.iso8601` writes, for every year).
    public static func iso8601(_ instant: Date) -> String {
        let seconds = Int64(instant.timeIntervalSince1970.rounded(.down))
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 { (days, secondOfDay) = (days - 1, secondOfDay + 86_400) }
        let (year, month, day) = date(fromDays: days)
        guard (0...9999).contains(year) else {
            return
                "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))T\(padded(secondOfDay / 3600, 2)):\(padded(secondOfDay / 60 % 60, 2)):\(padded(secondOfDay % 60, 2))Z"
        }
        // Digits written in place: the API writes two of these for every activity of a page.
        return String(unsafeUninitializedCapacity: 20) { text in
            writeDigits(year, width: 4, into: text, at: 0)
            writeDigits(month, width: 2, into: text, at: 5)
            writeDigits(day, width: 2, into: text, at: 8)
            writeDigits(secondOfDay / 3600, width: 2, into: text, at: 11)
            writeDigits(secondOfDay / 60 % 60, width: 2, into: text, at: 14)
            writeDigits(secondOfDay % 60, width: 2, into: text, at: 17)
            (text[4], text[7], text[10]) = (UInt8(ascii: "-"), UInt8(ascii: "-"), UInt8(ascii: "T"))
            (text[13], text[16], text[19]) = (UInt8(ascii: ":"), UInt8(ascii: ":"), UInt8(ascii: "Z"))
            return 20
        }
    }

    /// `value` (0 or more, at most `width` digits) as `width` decimal digits, zeros first.
    static func writeDigits(_ value: Int64, width: Int, into text: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        var rest = value
        for position in stride(from: start + width - 1, through: start, by: -1) {
            text[position] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
    }

    /// `value` in decimal, zeros before it up to `width` digits (a sign counts as one).
    static func padded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

extension JSONEncoder.DateEncodingStrategy {
    /// `.iso8601`'s text (`2026-11-22T09:30:00Z`) in the proleptic Gregorian calendar.
    public static var rfc3339: Self {
        .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(CivilCalendar.iso8601(date))
        }
    }
}
