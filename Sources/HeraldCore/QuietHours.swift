import Foundation

/// A day of the week, as people write it: `mon` … `sun`.
public enum Weekday: Int, Sendable, CaseIterable, Codable, Comparable {
    case mon = 1
    case tue, wed, thu, fri, sat, sun

    public var name: String { String(describing: self) }

    /// The weekday `instant` falls on in `calendar`'s zone.
    static func of(_ instant: Date, in calendar: Calendar) -> Weekday {
        // Calendar: 1 is Sunday … 7 is Saturday.
        let day = calendar.component(.weekday, from: instant)
        return Weekday(rawValue: day == 1 ? 7 : day - 1) ?? .mon
    }

    public static func < (lhs: Weekday, rhs: Weekday) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A person's quiet hours (docs/notifications.md): a window on their own clock, `22:00-07:00`, on
/// some or all days (a window that crosses midnight belongs to the day it starts on). A
/// non-P0 notification due inside it waits until it ends. Pure: `deferral` decides.
public struct QuietHours: Sendable, Equatable, CustomStringConvertible {
    public let start: TimeOfDay
    public let end: TimeOfDay
    /// The days a window starts on.
    public let days: Set<Weekday>

    public init?(start: TimeOfDay, end: TimeOfDay, days: Set<Weekday> = Set(Weekday.allCases)) {
        guard start != end, !days.isEmpty else { return nil }
        self.start = start
        self.end = end
        self.days = days
    }

    /// `22:00-07:00`, with `mon-fri`, `sat,sun`, `mon,wed-fri` or nil (every day).
    /// - Throws: `InputError` saying what is allowed.
    public static func parse(_ window: String, days: String? = nil) throws -> QuietHours {
        let parts = window.trimmingCharacters(in: .whitespaces).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let start = TimeOfDay(String(parts[0])), let end = TimeOfDay(String(parts[1])) else {
            throw InputError("quiet hours \"\(Input.printable(window))\" are not a window such as 22:00-07:00 (or off)")
        }
        let chosen = try days.map(Self.days) ?? Set(Weekday.allCases)
        guard let hours = QuietHours(start: start, end: end, days: chosen) else {
            throw InputError("quiet hours \"\(Input.printable(window))\" start and end at the same time")
        }
        return hours
    }

    /// `mon-fri`, `sat,sun`, `mon,wed-fri`.
    static func days(_ text: String) throws -> Set<Weekday> {
        func day(_ name: Substring) throws -> Weekday {
            guard let day = Weekday.allCases.first(where: { $0.name == name.trimmingCharacters(in: .whitespaces).lowercased() }) else {
                throw InputError("days \"\(Input.printable(text))\" are not days such as mon-fri or sat,sun")
            }
            return day
        }
        var result = Set<Weekday>()
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let range = item.split(separator: "-", omittingEmptySubsequences: false)
            switch range.count {
            case 1: result.insert(try day(range[0]))
            case 2:
                let (first, last) = (try day(range[0]), try day(range[1]))
                // mon-fri, or fri-mon across the weekend.
                var current = first
                while true {
                    result.insert(current)
                    if current == last { break }
                    current = Weekday(rawValue: current.rawValue % 7 + 1) ?? .mon
                }
            default: throw InputError("days \"\(Input.printable(text))\" are not days such as mon-fri or sat,sun")
            }
        }
        return result
    }

    /// `22:00-07:00` and, unless every day, the days: `22:00-07:00 mon,tue,wed,thu,fri`.
    public var description: String {
        let window = "\(start)-\(end)"
        return days.count == 7 ? window : window + " " + days.sorted().map(\.name).joined(separator: ",")
    }

    /// The days as one word for storage: `mon,tue,…`.
    public var daysText: String { days.sorted().map(\.name).joined(separator: ",") }

    /// When a notification due at `now` may go out: `nil` when `now` is outside the quiet
    /// hours, else the instant the window it falls in ends, on the clock of `timeZone`
    /// (a time the daylight-saving change skips moves to just after it).
    public func deferral(at now: Date, in timeZone: TimeZone) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let crossesMidnight = end < start
        // The window that may contain `now` started today, or (across midnight) yesterday.
        for offset in crossesMidnight ? [0, -1] : [0] {
            guard let day = calendar.date(byAdding: .day, value: offset, to: now) else { continue }
            guard days.contains(Weekday.of(day, in: calendar)) else { continue }
            let parts = calendar.dateComponents([.year, .month, .day], from: day)
            guard
                let opens = calendar.date(
                    from: DateComponents(
                        year: parts.year, month: parts.month, day: parts.day, hour: start.hour, minute: start.minute)),
                let endDay = calendar.date(byAdding: .day, value: crossesMidnight ? 1 : 0, to: opens),
                case let endParts = calendar.dateComponents([.year, .month, .day], from: endDay),
                let closes = calendar.date(
                    from: DateComponents(
                        year: endParts.year, month: endParts.month, day: endParts.day, hour: end.hour, minute: end.minute))
            else { continue }
            if now >= opens, now < closes { return closes }
        }
        return nil
    }
}

extension TimeOfDay: Comparable {
    public static func < (lhs: TimeOfDay, rhs: TimeOfDay) -> Bool { (lhs.hour, lhs.minute) < (rhs.hour, rhs.minute) }
}
