import Foundation

/// Who hears about an event, and on which app (docs/concepts.md). Pure; the actor of an event
/// never receives it.
public enum Routing {
    /// The audience of an activity event.
    public static func audience(of event: EventKind) -> ActivityStateMachine.Audience? {
        switch event {
        case .activityAssigned, .activityApproved, .activityRejected: .assignee
        case .activityStarted, .activityCompletionRequested: .manager
        case .chatMessage, .activityApprovalReminder, .activityEscalated, .activityDeadlineSoon, .activityOverdue, .activityUnopened: nil
        }
    }

    /// The recipients of a timer's event (docs/notifications.md); nobody acts, so nobody is left
    /// out as the actor. A reminder goes to the activity's manager, an escalation to every
    /// admin of the tenant (both on the manager app), the deadline reminder to the
    /// assignee, and overdue to the assignee and the manager. An item not opened goes again
    /// to the person who has not opened it, and to those above them: the manager for an
    /// assignment, the tenant's admins for a request for approval (`status` is the wait).
    public static func timer(
        _ kind: TimerKind, waiting status: ActivityStatus, manager: UUID, assignee: UUID, admins: [UUID]
    ) -> [ActivityEventPayload.Recipient] {
        var seen = Set<UUID>()
        let recipients: [ActivityEventPayload.Recipient]
        switch kind {
        case .approvalReminder:
            recipients = [.init(id: manager, app: .manager)]
        case .escalation:
            recipients = admins.map { .init(id: $0, app: .manager) }
        case .deadlineSoon:
            recipients = [.init(id: assignee, app: .member)]
        case .overdue:
            recipients = [.init(id: assignee, app: .member), .init(id: manager, app: .manager)]
        case .unopened:
            switch ActivityTimers.openingAwaited(in: status)?.audience {
            case .assignee: recipients = [.init(id: assignee, app: .member), .init(id: manager, app: .manager)]
            case .manager: recipients = ([manager] + admins).map { .init(id: $0, app: .manager) }
            case nil: recipients = []
            }
        }
        return recipients.filter { seen.insert($0.id).inserted }
    }

    /// The recipients of an activity event: the assignee on the member app, or the
    /// activity's manager on the manager app; nobody when that person is the actor.
    public static func activity(
        _ event: EventKind, manager: UUID, assignee: UUID, actor: UUID
    ) -> [ActivityEventPayload.Recipient] {
        guard let audience = audience(of: event) else { return [] }
        let person = audience == .manager ? manager : assignee
        return person == actor ? [] : [.init(id: person, app: audience.app)]
    }

    /// The recipients of a chat message: every participant but the sender, each on the app
    /// that matches their role in the conversation's team (managers on the manager app);
    /// nobody for a system message.
    public static func chat(
        participants: [(id: UUID, role: TeamRole?)], sender: UUID, isSystem: Bool
    ) -> [ActivityEventPayload.Recipient] {
        guard !isSystem else { return [] }
        var seen = Set<UUID>()
        return participants.compactMap { participant in
            guard participant.id != sender, seen.insert(participant.id).inserted else { return nil }
            return .init(id: participant.id, app: participant.role == .manager ? .manager : .member)
        }
    }
}
