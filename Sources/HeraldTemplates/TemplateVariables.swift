import Foundation
import HeraldCore

/// The values a template sees, built from an event and formatted for its recipient.
public enum TemplateVariables {
    static let activityNames: Set<String> = [
        "name", "manager", "member", "actor", "team", "date", "deadline", "priority", "isP0", "reason", "since", "waited", "forActor"
    ]
    static let chatNames: Set<String> = ["sender", "group", "text", "isGroup"]
    /// A summary of the messages quiet hours held back in one conversation also has `count`.
    static let summaryNames: Set<String> = chatNames.union(["count"])

    /// Who is reading: dates are written in their locale and time zone.
    public struct Recipient: Sendable, Equatable {
        public var locale: String
        public var timeZone: String

        public init(locale: String = "en", timeZone: String = "UTC") {
            self.locale = locale
            self.timeZone = timeZone
        }
    }

    /// An activity event's facts, as its snapshot holds them.
    public struct Activity: Sendable, Equatable {
        public var name: String
        public var manager: String
        public var member: String
        public var actor: String
        public var team: String
        public var priority: Priority
        public var deadline: LocalDate
        public var occurredAt: Date
        public var reason: String?
        /// For a reminder: when the wait it chases began.
        public var waitingSince: Date?
        /// Whether the recipient is the actor (the person an item not opened waits on is told
        /// in other words than their manager).
        public var forActor: Bool

        public init(
            name: String, manager: String, member: String, actor: String, team: String, priority: Priority,
            deadline: LocalDate, occurredAt: Date, reason: String? = nil, waitingSince: Date? = nil, forActor: Bool = false
        ) {
            self.name = name
            self.manager = manager
            self.member = member
            self.actor = actor
            self.team = team
            self.priority = priority
            self.deadline = deadline
            self.occurredAt = occurredAt
            self.reason = reason
            self.waitingSince = waitingSince
            self.forActor = forActor
        }

        /// The activity of an event snapshot.
        public init(_ payload: ActivityEventPayload) {
            self.init(
                name: payload.activityName, manager: payload.manager.name, member: payload.assignee.name,
                actor: payload.actor.name, team: payload.teamName, priority: payload.priority, deadline: payload.deadline,
                occurredAt: payload.occurredAt, reason: payload.reason, waitingSince: payload.waitingSince)
        }
    }

    /// A chat message's facts.
    public struct Chat: Sendable, Equatable {
        public var sender: String
        /// The group's name; nil or empty for an unnamed group (and for direct messages).
        public var group: String?
        public var isGroup: Bool
        public var text: String
        /// For a summary: how many messages it stands for.
        public var count: Int?

        public init(sender: String, group: String?, isGroup: Bool, text: String, count: Int? = nil) {
            self.sender = sender
            self.group = group
            self.isGroup = isGroup
            self.text = text
            self.count = count
        }
    }

    static func values(_ activity: Activity, for recipient: Recipient) -> [String: Any] {
        var values: [String: Any] = [
            "name": activity.name, "manager": activity.manager, "member": activity.member, "actor": activity.actor,
            "team": activity.team, "date": formatInstant(activity.occurredAt, for: recipient),
            "deadline": formatDate(activity.deadline, locale: recipient.locale),
            "priority": activity.priority.rawValue.uppercased(), "isP0": activity.priority == .p0, "forActor": activity.forActor
        ]
        if let reason = activity.reason, !reason.isEmpty { values["reason"] = reason }
        if let since = activity.waitingSince {
            values["since"] = formatInstantWithTime(since, for: recipient)
            values["waited"] = formatWaited(activity.occurredAt.timeIntervalSince(since), locale: recipient.locale)
        }
        return values
    }

    static func values(_ chat: Chat) -> [String: Any] {
        var values: [String: Any] = ["sender": chat.sender, "isGroup": chat.isGroup, "text": TextShortening.preview(chat.text)]
        // Absent, not empty: an empty string counts as true in a Mustache section.
        if let group = chat.group, !group.isEmpty { values["group"] = group }
        if let count = chat.count { values["count"] = count }
        return values
    }

    /// An instant as a date on the recipient's calendar: `Nov 28, 2026` in `en`.
    public static func formatInstant(_ date: Date, for recipient: Recipient) -> String {
        let zone = TimeZone.named(recipient.timeZone)
        return date.formatted(style(locale: recipient.locale, timeZone: zone))
    }

    /// An instant as a date and a 24-hour time on the recipient's clock: `Nov 21, 2026, 10:00`
    /// in `en`, `21. Nov. 2026, 11:00` in `de` (Berlin).
    public static func formatInstantWithTime(_ date: Date, for recipient: Recipient) -> String {
        let zone = TimeZone.named(recipient.timeZone)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        let hour = parts.hour ?? 0
        let minute = parts.minute ?? 0
        return formatInstant(date, for: recipient) + ", " + (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    }

    /// How long a wait has lasted, in its largest whole unit (at least a minute), to follow
    /// "ago": `15 minutes`, `4 hours`, `1 day` in `en`; `15 Minuten`, `4 Stunden`, `1 Tag` in
    /// `de` (as after "vor").
    public static func formatWaited(_ seconds: TimeInterval, locale: String) -> String {
        // Whole seconds first: a wait measured between two stored instants may be a hair short.
        let minutes = max(1, seconds.isFinite && abs(seconds) < 1e12 ? Int(seconds.rounded()) / 60 : 1)
        let (count, unit) = minutes < 120 ? (minutes, 0) : minutes < 48 * 60 ? (minutes / 60, 1) : (minutes / 1440, 2)
        let units =
            locale.lowercased().hasPrefix("de")
            ? [("Minute", "Minuten"), ("Stunde", "Stunden"), ("Tag", "Tagen")] : [("minute", "minutes"), ("hour", "hours"), ("day", "days")]
        return "\(count) " + (count == 1 ? units[unit].0 : units[unit].1)
    }

    /// A calendar date (a deadline has no zone): the same day everywhere.
    public static func formatDate(_ date: LocalDate, locale: String) -> String {
        let utc = TimeZone.utc
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = utc
        let noon = calendar.date(from: DateComponents(year: date.year, month: date.month, day: date.day, hour: 12)) ?? Date(timeIntervalSince1970: 0)
        return noon.formatted(style(locale: locale, timeZone: utc))
    }

    private static func style(locale: String, timeZone: TimeZone) -> Date.FormatStyle {
        // Bare `en` means American English, whose abbreviated form is `Nov 28, 2026`.
        let identifier = locale == "en" ? "en_US" : locale.replacingOccurrences(of: "-", with: "_")
        return Date.FormatStyle(
            date: .abbreviated, time: .omitted, locale: Locale(identifier: identifier),
            calendar: Calendar(identifier: .gregorian), timeZone: timeZone)
    }

    /// Sample values for validation and previews.
    /// Sample data for every priority, with and without the optional parts, each with words
    /// that say which it is ("a p2 activity without a reason or group name").
    static func samples() -> [(String, [String: Any])] {
        Priority.allCases.flatMap { priority in
            [true, false].map { flag in
                var values = values(
                    Activity(
                        name: "Ship v2", manager: "Alice Moreau", member: "Chidi Okafor", actor: "Alice Moreau", team: "Field Ops",
                        priority: priority, deadline: sampleDeadline,
                        occurredAt: sampleEventTime, reason: flag ? "needs tests" : nil,
                        waitingSince: flag ? sampleEventTime.addingTimeInterval(-1800) : nil, forActor: flag),
                    for: Recipient())
                values.merge(self.values(Chat(sender: "Alice Moreau", group: flag ? "Launch crew" : nil, isGroup: flag, text: "On my way", count: 3)))
                { $1 }
                // A digest of seven (with `more`), or of one chat message (without).
                let digest =
                    flag
                    ? sampleDigest
                    : Digest(scope: "Launch crew", isChat: true, items: [DigestItem(event: .chatMessage, sender: "Alice Moreau", text: "On my way")])
                values.merge(self.values(digest)) { $1 }
                return ("a \(priority.rawValue) activity \(flag ? "with a reason and a group name" : "without a reason or group name")", values)
            }
        }
    }

    /// 2026-11-28, a week after the sample event (2026-11-21 23:30 UTC).
    static let sampleEventTime = Date(timeIntervalSince1970: 1_795_303_800)
    static let sampleDeadline = LocalDate(Date(timeIntervalSince1970: 1_795_867_200), in: .utc)
}
