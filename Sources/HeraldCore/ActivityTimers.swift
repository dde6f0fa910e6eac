import Foundation

/// What an activity timer chases (docs/notifications.md).
public enum TimerKind: String, Sendable, CaseIterable, Codable {
    case approvalReminder = "approval_reminder"
    case escalation
    case deadlineSoon = "deadline_soon"
    case overdue
    /// An assignment or a request for approval its person has not opened (docs/notifications.md).
    case unopened

    /// The event a firing appends.
    public var event: EventKind {
        switch self {
        case .approvalReminder: .activityApprovalReminder
        case .escalation: .activityEscalated
        case .deadlineSoon: .activityDeadlineSoon
        case .overdue: .activityOverdue
        case .unopened: .activityUnopened
        }
    }

    /// Whether it belongs to one wait for approval (a new completion request starts new ones).
    public var chasesApproval: Bool { self == .approvalReminder || self == .escalation }
}

/// How a timer ends.
public enum TimerStatus: String, Sendable, CaseIterable, Codable {
    /// Waiting for its due time.
    case pending
    /// Its event was appended to the outbox.
    case fired
    /// Due, but the activity no longer waited for what it chases (the reason says why).
    case skipped
    /// Ended before it was due: the activity moved on, or the policy turned it off.
    case cancelled
}

/// A timer to be written: what it chases, for which period, and when it is due.
public struct PlannedTimer: Sendable, Equatable {
    public let kind: TimerKind
    /// The waiting period it belongs to: the activity's version when the wait began (the
    /// deadline timers have one period, 0). A period's timer of a kind fires at most once.
    public let period: Int
    public let dueAt: Date

    public init(kind: TimerKind, period: Int, dueAt: Date) {
        self.kind = kind
        self.period = period
        self.dueAt = dueAt
    }
}

/// The pure decisions about timers: which a transition starts and ends, and whether a due
/// one still applies when it fires.
public enum ActivityTimers {
    /// The period of the deadline timers: one per activity.
    public static let deadlinePeriod = 0

    /// The approval timers an activity that just entered `status` (at `since`, with the new
    /// `version`) waits on: a reminder and an escalation while it waits for approval.
    public static func approvalTimers(
        enteringStatus status: ActivityStatus, version: Int, at since: Date, priority: Priority, policy: ReminderPolicy
    ) -> [PlannedTimer] {
        guard status == .completionRequested else { return [] }
        return [(TimerKind.approvalReminder, policy.approvalReminder[priority]), (.escalation, policy.escalateAfter[priority])]
            .compactMap { kind, delay in
                delay.map { PlannedTimer(kind: kind, period: version, dueAt: since.addingTimeInterval($0.timeInterval)) }
            }
    }

    /// The `unopened` timer of an activity that just entered `status` (at `since`, with the new
    /// `version`): an assignment or a request for approval waits to be opened by its person.
    public static func unopenedTimers(
        enteringStatus status: ActivityStatus, version: Int, at since: Date, priority: Priority, policy: ReminderPolicy
    ) -> [PlannedTimer] {
        guard openingAwaited(in: status) != nil, let delay = policy.unopened[priority] else { return [] }
        return [PlannedTimer(kind: .unopened, period: version, dueAt: since.addingTimeInterval(delay.timeInterval))]
    }

    /// What an activity in `status` waits for someone to open: the event that told them, and
    /// who they are (the assignee an assignment, the manager a request for approval); nil
    /// while nobody is asked to act.
    public static func openingAwaited(in status: ActivityStatus) -> (event: EventKind, audience: ActivityStateMachine.Audience)? {
        switch status {
        case .assigned: (.activityAssigned, .assignee)
        case .completionRequested: (.activityCompletionRequested, .manager)
        case .running, .approved: nil
        }
    }

    /// The deadline timers of an activity: the reminder at the policy's time on the deadline
    /// date, and overdue when that date ends, both on the assignee's clock (a time the
    /// daylight-saving change skips moves to just after it).
    public static func deadlineTimers(deadline: LocalDate, timeZone: TimeZone, policy: ReminderPolicy) -> [PlannedTimer] {
        var timers: [PlannedTimer] = []
        if let time = policy.deadlineReminderAt, let due = instant(on: deadline, at: time, in: timeZone) {
            timers.append(PlannedTimer(kind: .deadlineSoon, period: deadlinePeriod, dueAt: due))
        }
        if policy.overdue, let due = endOfDay(deadline, in: timeZone) {
            timers.append(PlannedTimer(kind: .overdue, period: deadlinePeriod, dueAt: due))
        }
        return timers
    }

    /// The kinds of pending timer a change from `old` into `new` ends: leaving the wait for
    /// approval ends its reminder, escalation and wait to be opened; leaving the assignment
    /// ends its wait to be opened; approval ends everything. (Other changes end nothing and
    /// cost nothing.)
    public static func ended(leaving old: ActivityStatus?, entering new: ActivityStatus) -> Set<TimerKind> {
        if new == .approved { return Set(TimerKind.allCases) }
        switch old {
        case .completionRequested: return [.approvalReminder, .escalation, .unopened]
        case .assigned: return [.unopened]
        case .running, .approved, nil: return []
        }
    }

    /// What became of the item an `unopened` timer waits on: the person's notification of the
    /// event that asked them to act (docs/inbox.md).
    public enum AwaitedItem: Sendable, Equatable {
        /// Neither read nor archived.
        case unread
        case read(at: Date)
        case archived(at: Date)
        /// Not there yet: the event that began the wait is still to be fanned out (a worker behind).
        case notYetWritten
        /// They were not told (their preference was off).
        case absent
    }

    /// The activity as a firing timer reads it, in the firing's transaction.
    public struct Subject: Sendable, Equatable {
        public var status: ActivityStatus
        public var version: Int
        public var deadline: LocalDate
        public var timeZone: TimeZone
        /// For an `unopened` timer: the item it waits on.
        public var awaitedItem: AwaitedItem

        public init(
            status: ActivityStatus, version: Int, deadline: LocalDate, timeZone: TimeZone, awaitedItem: AwaitedItem = .absent
        ) {
            self.status = status
            self.version = version
            self.deadline = deadline
            self.timeZone = timeZone
            self.awaitedItem = awaitedItem
        }
    }

    /// What a due timer does.
    public enum Decision: Sendable, Equatable {
        case fire
        case skip(reason: String)
        /// Not yet decidable: due again a little later.
        case later
    }

    /// How long a timer that cannot be decided yet waits before it is looked at again.
    public static let undecidedDelay: TimeInterval = 5

    /// Whether a due timer still applies to the activity as it is now.
    public static func decide(_ kind: TimerKind, period: Int, activity: Subject, now: Date) -> Decision {
        switch kind {
        case .approvalReminder, .escalation:
            guard activity.status == .completionRequested, activity.version == period else {
                return .skip(reason: "the activity moved on (it is \(activity.status.rawValue) now)")
            }
            return .fire
        case .deadlineSoon:
            guard activity.status == .assigned || activity.status == .running else {
                return .skip(reason: "the activity is \(activity.status.rawValue)")
            }
            if let end = endOfDay(activity.deadline, in: activity.timeZone), now >= end {
                return .skip(reason: "the deadline date had ended when the reminder came due")
            }
            return .fire
        case .overdue:
            return activity.status == .approved ? .skip(reason: "the activity is approved") : .fire
        case .unopened:
            guard openingAwaited(in: activity.status) != nil, activity.version == period else {
                return .skip(reason: "the activity moved on (it is \(activity.status.rawValue) now)")
            }
            switch activity.awaitedItem {
            case .unread: return .fire
            case .read(let at): return .skip(reason: "the item was read at \(at.formatted(.iso8601))")
            case .archived(let at): return .skip(reason: "the item was archived at \(at.formatted(.iso8601))")
            case .notYetWritten: return .later
            case .absent: return .skip(reason: "they were not told of it (no item to open)")
            }
        }
    }

    /// Midnight after `date` on the clock of `timeZone`.
    static func endOfDay(_ date: LocalDate, in timeZone: TimeZone) -> Date? {
        guard let start = instant(on: date, at: TimeOfDay(hour: 0, minute: 0), in: timeZone) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar.date(byAdding: .day, value: 1, to: start)
    }

    static func instant(on date: LocalDate, at time: TimeOfDay?, in timeZone: TimeZone) -> Date? {
        guard let time else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar.date(
            from: DateComponents(year: date.year, month: date.month, day: date.day, hour: time.hour, minute: time.minute))
    }
}
