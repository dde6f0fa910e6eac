import Foundation
import HeraldCore

/// An instant as HTTP writes it in `Date` (RFC 9110 §5.6.7): `Fri, 27 Nov 2026 07:20:38 GMT`.
enum HTTPDate {
    static func text(_ instant: Date) -> String {
        let seconds = Int64(instant.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let second = seconds - days * 86_400
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        // 1970-01-01 was a Thursday.
        let weekday = Self.weekdays[Int(((days % 7) + 11) % 7)]
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekday), \(two(day)) \(months[Int(month) - 1]) \(year) \(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60)) GMT"
    }

    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}
