import Foundation

/// A tenant's rules for chasing activities (docs/notifications.md): how long an activity may wait
/// for approval before its manager is reminded and before the tenant's admins hear of it,
/// per priority; when on the deadline date the assignee is reminded; whether an
/// activity past its deadline is reported; and how long an assignment or a request for
/// approval may stay unopened before it is pushed again and told to those above. Pure: the store keeps it, the timers apply it.
public struct ReminderPolicy: Sendable, Equatable {
    /// A value per priority.
    public struct PerPriority<Value: Sendable & Equatable>: Sendable, Equatable {
        public var p0: Value
        public var p1: Value
        public var p2: Value
        public var p3: Value

        public init(p0: Value, p1: Value, p2: Value, p3: Value) {
            self.p0 = p0
            self.p1 = p1
            self.p2 = p2
            self.p3 = p3
        }

        /// Every priority `value`.
        public init(all value: Value) {
            self.init(p0: value, p1: value, p2: value, p3: value)
        }

        public subscript(priority: Priority) -> Value {
            get {
                switch priority {
                case .p0: p0
                case .p1: p1
                case .p2: p2
                case .p3: p3
                }
            }
            set {
                switch priority {
                case .p0: p0 = newValue
                case .p1: p1 = newValue
                case .p2: p2 = newValue
                case .p3: p3 = newValue
                }
            }
        }
    }

    /// How long after the completion request the manager is reminded; `nil` is off.
    public var approvalReminder: PerPriority<PolicyDuration?>
    /// How long after the completion request the tenant's admins are told; `nil` is off.
    public var escalateAfter: PerPriority<PolicyDuration?>
    /// The time on the deadline date (the assignee's clock) of the deadline reminder; `nil` is off.
    public var deadlineReminderAt: TimeOfDay?
    /// Whether an activity whose deadline date has ended unapproved is reported.
    public var overdue: Bool
    /// How long after an assignment or a request for approval its person may leave it
    /// unopened before it is pushed to them again and told to those above them; `nil` is off.
    public var unopened: PerPriority<PolicyDuration?>

    public init(
        approvalReminder: PerPriority<PolicyDuration?>, escalateAfter: PerPriority<PolicyDuration?>, deadlineReminderAt: TimeOfDay?,
        overdue: Bool, unopened: PerPriority<PolicyDuration?> = .allOff
    ) {
        self.approvalReminder = approvalReminder
        self.escalateAfter = escalateAfter
        self.deadlineReminderAt = deadlineReminderAt
        self.overdue = overdue
        self.unopened = unopened
    }

    /// The policy of a tenant that never set one: escalation by engagement is off until a
    /// tenant turns it on (it tells managers about their people's phones).
    public static let defaults = ReminderPolicy(
        approvalReminder: .init(p0: .minutes(30), p1: .hours(4), p2: .hours(24), p3: nil),
        escalateAfter: .init(p0: .hours(2), p1: .hours(24), p2: nil, p3: nil),
        deadlineReminderAt: TimeOfDay(hour: 9, minute: 0),
        overdue: true)

    /// This policy with the settings a person typed changed (`nil` leaves one as it is):
    /// `p0=30m,p1=4h,p3=off` for the per-priority ones, `09:00` or `off`, `on` or `off`.
    /// - Throws: `InputError` naming the option and what it allows.
    public func applying(
        approvalReminder: String? = nil, escalateAfter: String? = nil, deadlineReminderAt: String? = nil, overdue: String? = nil,
        unopened: String? = nil
    ) throws -> ReminderPolicy {
        var policy = self
        if let approvalReminder {
            policy.approvalReminder = try Self.perPriority(approvalReminder, field: "approval reminder", over: policy.approvalReminder)
        }
        if let escalateAfter {
            policy.escalateAfter = try Self.perPriority(escalateAfter, field: "escalate after", over: policy.escalateAfter)
        }
        if let deadlineReminderAt {
            policy.deadlineReminderAt = try Self.timeOrOff(deadlineReminderAt, field: "deadline reminder at")
        }
        if let overdue {
            policy.overdue = try Self.onOrOff(overdue, field: "overdue")
        }
        if let unopened {
            policy.unopened = try Self.perPriority(unopened, field: "unopened", over: policy.unopened)
        }
        return policy
    }

    /// `p0=30m,p1=4h,p3=off`: each named priority set, the others left as in `base`.
    static func perPriority(
        _ text: String, field: String, over base: PerPriority<PolicyDuration?>
    ) throws -> PerPriority<PolicyDuration?> {
        var result = base
        var seen = Set<Priority>()
        let entries = text.split(separator: ",", omittingEmptySubsequences: false)
        for entry in entries {
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
            guard parts.count == 2, let priority = Priority(rawValue: name) else {
                throw InputError(
                    "\(field) \"\(Input.printable(String(entry)))\" is not PRIORITY=DURATION (such as p0=30m,p1=4h,p3=off)")
            }
            guard seen.insert(priority).inserted else { throw InputError("\(field) names \(name) twice") }
            result[priority] = try PolicyDuration.orOff(String(parts[1]), field: "\(field) for \(name)")
        }
        return result
    }

    /// `HH:MM` or `off`.
    public static func timeOrOff(_ text: String, field: String) throws -> TimeOfDay? {
        let value = text.trimmingCharacters(in: .whitespaces).lowercased()
        if value == "off" { return nil }
        guard let time = TimeOfDay(value) else {
            throw InputError("\(field) \"\(Input.printable(text))\" is not a time such as 09:00 (or off)")
        }
        return time
    }

    /// `on` or `off`.
    public static func onOrOff(_ text: String, field: String) throws -> Bool {
        switch text.trimmingCharacters(in: .whitespaces).lowercased() {
        case "on": return true
        case "off": return false
        default: throw InputError("\(field) \"\(Input.printable(text))\" is neither on nor off")
        }
    }
}

extension ReminderPolicy.PerPriority where Value == PolicyDuration? {
    /// Off for every priority.
    public static var allOff: Self { Self(all: nil) }
}

/// A policy interval: whole seconds, from 1 s to 365 days, written the way it was typed
/// (`30m`, `4h`, `1d`, `90s`).
public struct PolicyDuration: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let seconds: Int

    public static let maximum = 365 * 86_400

    public init?(seconds: Int) {
        guard (1...Self.maximum).contains(seconds) else { return nil }
        self.seconds = seconds
    }

    public static func minutes(_ count: Int) -> PolicyDuration { PolicyDuration(exactly: count * 60) }
    public static func hours(_ count: Int) -> PolicyDuration { PolicyDuration(exactly: count * 3600) }

    private init(exactly seconds: Int) { self.seconds = seconds }

    /// `30m`, `4h`, `1d`, `90s` (a bare number is seconds).
    /// - Throws: `InputError` for anything else, for fractions of a second, and outside 1 s…365 d.
    public static func parse(_ text: String, field: String) throws -> PolicyDuration {
        let duration = try Input.duration(text, field: field)
        let (seconds, attoseconds) = duration.components
        guard attoseconds == 0, let value = PolicyDuration(seconds: Int(clamping: seconds)) else {
            throw InputError("\(field) \"\(Input.printable(text))\" must be whole seconds from 1s to 365d (or off)")
        }
        return value
    }

    /// A duration, or `nil` for `off`.
    public static func orOff(_ text: String, field: String) throws -> PolicyDuration? {
        text.trimmingCharacters(in: .whitespaces).lowercased() == "off" ? nil : try parse(text, field: field)
    }

    public var timeInterval: TimeInterval { TimeInterval(seconds) }

    /// The largest unit that divides it: `90m`, `2h`, `1d`, `45s`.
    public var description: String {
        for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60)] where seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }

    public static func < (lhs: PolicyDuration, rhs: PolicyDuration) -> Bool { lhs.seconds < rhs.seconds }
}

/// A time on the clock, `HH:MM`, with no date or zone.
public struct TimeOfDay: Sendable, Hashable, CustomStringConvertible {
    public let hour: Int
    public let minute: Int

    public init?(hour: Int, minute: Int) {
        guard (0...23).contains(hour), (0...59).contains(minute) else { return nil }
        self.hour = hour
        self.minute = minute
    }

    /// Strict `HH:MM` (24-hour).
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let hour = Int(parts[0]), let minute = Int(parts[1])
        else { return nil }
        self.init(hour: hour, minute: minute)
    }

    public var description: String {
        (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    }
}
