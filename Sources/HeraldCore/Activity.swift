import Foundation

/// Where an activity is in its life (docs/concepts.md).
public enum ActivityStatus: String, Sendable, CaseIterable, Codable {
    case assigned
    case running
    case completionRequested = "completion_requested"
    case approved
}

/// Something a person does to an activity.
public enum ActivityAction: String, Sendable, CaseIterable, Codable {
    case assign, start, complete, approve, reject
}

/// How urgent an activity is; `p0` messages carry the 🔻P0🔻 prefix.
public enum Priority: String, Sendable, CaseIterable, Codable, Comparable {
    case p0, p1, p2, p3

    public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Which of the two apps a notification or device belongs to.
public enum AppKind: String, Sendable, CaseIterable, Codable {
    case member, manager
}

/// A person's role in one team.
public enum TeamRole: String, Sendable, CaseIterable, Codable {
    case manager, member
}

/// The kinds of event the workflow appends to the outbox.
public enum EventKind: String, Sendable, CaseIterable, Codable {
    case activityAssigned = "activity.assigned"
    case activityStarted = "activity.started"
    case activityCompletionRequested = "activity.completion_requested"
    case activityApproved = "activity.approved"
    case activityRejected = "activity.rejected"
    case chatMessage = "chat.message"
    /// Still waiting for approval after the tenant's reminder interval (docs/notifications.md).
    case activityApprovalReminder = "activity.approval_reminder"
    /// Still waiting after the escalation interval: the tenant's admins hear of it.
    case activityEscalated = "activity.escalated"
    /// The deadline is today and the activity is not done.
    case activityDeadlineSoon = "activity.deadline_soon"
    /// The deadline date has ended and the activity is not approved.
    case activityOverdue = "activity.overdue"
    /// An assignment or a request for approval not opened within the tenant's `unopened`
    /// interval: pushed again to the person, and told to whoever is above them.
    case activityUnopened = "activity.unopened"

    /// The apps this event reaches (docs/concepts.md, docs/notifications.md): where a preference about it applies.
    public var apps: [AppKind] {
        switch self {
        case .activityAssigned, .activityApproved, .activityRejected, .activityDeadlineSoon: [.member]
        case .activityStarted, .activityCompletionRequested, .activityApprovalReminder, .activityEscalated: [.manager]
        case .activityOverdue, .activityUnopened, .chatMessage: [.member, .manager]
        }
    }

    /// A change of the activity's status (not a reminder about one): a later one supersedes
    /// the pushes of an earlier one.
    public var isStatusChange: Bool {
        switch self {
        case .activityAssigned, .activityStarted, .activityCompletionRequested, .activityApproved, .activityRejected: true
        case .chatMessage, .activityApprovalReminder, .activityEscalated, .activityDeadlineSoon, .activityOverdue, .activityUnopened:
            false
        }
    }

    /// The events about an activity (every one but a chat message): what templates word and
    /// webhooks report under these same names.
    public static let activityEvents: [EventKind] = allCases.filter { $0 != .chatMessage }

    /// The `type` value in the push payload's data: `activity_assigned`, `new_message`, ….
    public var payloadType: String {
        switch self {
        case .chatMessage: "new_message"
        default: rawValue.replacingOccurrences(of: ".", with: "_")
        }
    }
}
