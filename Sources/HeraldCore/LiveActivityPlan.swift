import Foundation

/// Which Live Activity push an activity event makes, and for whom (docs/apps.md). Pure: fan-out
/// asks it for every event, and writes what it answers.
///
/// Only P0 activities have one. Assigning one starts it on the assignee's phone (member app)
/// and the manager's (manager app), through the push-to-start tokens their apps registered;
/// every later change updates it through the update tokens the apps uploaded for it (reminders,
/// escalations and deadline notices at priority 5), and approval ends it.
public enum LiveActivityPlan {
    /// Who a start goes to: each person on the app their Live Activity lives in.
    public struct Audience: Sendable, Equatable, Hashable {
        public let person: UUID
        public let app: AppKind
    }

    /// The push an event makes: its content, and (for a start) whom it starts for; the others
    /// go to every update token of the activity.
    public struct Push: Sendable, Equatable {
        public let content: LiveActivityContent
        public let starts: [Audience]
    }

    /// Whose Live Activity an activity is, and on which app: its assignee's on the member app,
    /// its manager's on the manager app (the one rule the push, fan-out and the access policy ask).
    public static func audience(assignee: UUID, manager: UUID) -> [Audience] {
        [Audience(person: assignee, app: .member), Audience(person: manager, app: .manager)]
    }

    /// The event's Live Activity push, nil when it makes none.
    /// - Parameter assigneeTimeZone: the assignee's clock, on which the deadline ends
    ///   (`stale-date`, as for the overdue notice).
    public static func push(for payload: ActivityEventPayload, assigneeTimeZone: TimeZone) -> Push? {
        guard payload.priority == .p0, payload.event != .chatMessage else { return nil }
        let event: LiveActivityContent.Event =
            switch payload.event {
            case .activityAssigned: .start
            case .activityApproved: .end
            default: .update
            }
        let routine: Set<EventKind> = [
            .activityApprovalReminder, .activityEscalated, .activityDeadlineSoon, .activityOverdue, .activityUnopened
        ]
        let occurred = Int64(payload.occurredAt.timeIntervalSince1970)
        // Waiting for approval since the completion request: the request itself, or what a
        // reminder says the wait began with.
        let waitingSince: Date? =
            payload.status == .completionRequested
            ? (payload.waitingSince ?? (payload.event == .activityCompletionRequested ? payload.occurredAt : nil)) : nil
        let state = LiveActivityContent.ContentState(
            status: payload.status.rawValue, assignee: payload.assignee.name, deadline: payload.deadline.description,
            waitingSince: waitingSince.map { Int64($0.timeIntervalSince1970) })
        let stale = ActivityTimers.endOfDay(payload.deadline, in: assigneeTimeZone).map { Int64($0.timeIntervalSince1970) }
        let content = LiveActivityContent(
            event: event,
            attributes: event == .start
                ? .init(activityId: payload.activityID.lowercasedString, name: payload.activityName, team: payload.teamName) : nil,
            contentState: state, timestamp: occurred, staleDate: event == .end ? nil : stale,
            dismissalDate: event == .end ? occurred + Int64(LiveActivityContent.dismissalDelay) : nil,
            priority: routine.contains(payload.event) ? 5 : 10)
        let starts = event == .start ? audience(assignee: payload.assignee.id, manager: payload.manager.id) : []
        return Push(content: content, starts: starts)
    }
}
