import Foundation

/// How long a person's digest gathers before it is pushed (docs/notifications.md): a window that
/// opens at the first gathered event and ends after `1m`, `5m`, `15m`, `1h` (the default) or
/// `4h`, or at the next `daily HH:MM` on the person's own clock. Pure.
public enum DigestWindow: Sendable, Equatable, CustomStringConvertible {
    case minutes(Int)
    case daily(TimeOfDay)

    /// The lengths one may choose, in minutes, by name.
    static let lengths: [(name: String, minutes: Int)] = [("1m", 1), ("5m", 5), ("15m", 15), ("1h", 60), ("4h", 240)]

    public static let `default` = DigestWindow.minutes(60)

    /// The most items one digest gathers: at this many it is pushed at once.
    public static let maximumItems = 50

    /// `1m`, `5m`, `15m`, `1h`, `4h` or `daily HH:MM`.
    /// - Throws: `InputError` naming what is allowed.
    public static func parse(_ text: String) throws -> DigestWindow {
        let value = text.trimmingCharacters(in: .whitespaces).lowercased()
        if let length = lengths.first(where: { $0.name == value }) { return .minutes(length.minutes) }
        let parts = value.split(separator: " ", omittingEmptySubsequences: true)
        if parts.count == 2, parts[0] == "daily", let time = TimeOfDay(String(parts[1])) { return .daily(time) }
        throw InputError("the digest window \"\(Input.printable(text))\" is not one of 1m, 5m, 15m, 1h, 4h or daily HH:MM")
    }

    public var description: String {
        switch self {
        case .minutes(let minutes): Self.lengths.first { $0.minutes == minutes }?.name ?? "\(minutes)m"
        case .daily(let time): "daily \(time)"
        }
    }

    /// When a window opened at `opened` ends: its length later, or the first `HH:MM` after
    /// `opened` on the clock of `zone` (a time the daylight-saving change skips moves to just
    /// after it).
    public func closes(openedAt opened: Date, in zone: TimeZone) -> Date {
        switch self {
        case .minutes(let minutes):
            return opened.addingTimeInterval(TimeInterval(minutes * 60))
        case .daily(let time):
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let next = calendar.nextDate(
                after: opened, matching: DateComponents(hour: time.hour, minute: time.minute, second: 0), matchingPolicy: .nextTime)
            return next ?? opened.addingTimeInterval(86_400)
        }
    }
}
