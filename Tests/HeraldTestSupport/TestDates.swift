import Foundation

/// Deadlines for tests that run workers: two months from today, never a fixed date. A fixed
/// one (2026-11-28) became "today" and then the past, and its deadline reminder and overdue
/// timers fired in the middle of tests that did not expect them.
public enum TestDates {
    /// `YYYY-MM-DD`, 60 days from now (UTC).
    public static let deadline: String = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let parts = calendar.dateComponents([.year, .month, .day], from: Date().addingTimeInterval(60 * 86_400))
        return String(format: "%04d-%02d-%02d", parts.year ?? 2000, parts.month ?? 1, parts.day ?? 1)
    }()

    /// `deadline` as the English templates write it: `Jan 26, 2027`.
    public static let deadlineShown: String = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let date =
            calendar.date(
                from: DateComponents(
                    year: Int(deadline.prefix(4)), month: Int(deadline.dropFirst(5).prefix(2)), day: Int(deadline.suffix(2)), hour: 12)) ?? Date()
        var style = Date.FormatStyle(date: .abbreviated, time: .omitted, locale: Locale(identifier: "en_US"))
        style.timeZone = .gmt
        return date.formatted(style)
    }()
}
