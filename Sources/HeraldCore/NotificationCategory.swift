/// The buttons a push about an activity offers its recipient (docs/apps.md): the app registers
/// these categories (`UNNotificationCategory` on iOS, its own actions on Android) and a
/// button calls the API with the activity's version in `If-Match`, so a stale button gets
/// `412` and never approves a version its manager never saw.
public enum NotificationCategory: String, Sendable, CaseIterable {
    /// Start, for the assignee of an assigned activity.
    case activityAssigned = "ACTIVITY_ASSIGNED"
    /// Approve and Send back, for the managers of an activity awaiting approval.
    case activityApproval = "ACTIVITY_APPROVAL"

    /// What a push about an activity now in `status` offers `audience`: the actions the state
    /// machine lets them take from there, when they are one of the two sets the apps know.
    public static func offered(for status: ActivityStatus, to audience: ActivityStateMachine.Audience) -> NotificationCategory? {
        let actor: ActivityStateMachine.Actor =
            switch audience {
            case .assignee: .init(isAssignee: true)
            case .manager: .init(isTeamManager: true)
            }
        let actions = Set(ActivityStateMachine.actions(from: status, by: actor))
        switch actions {
        case [.start]: return .activityAssigned
        case [.approve, .reject]: return .activityApproval
        default: return nil
        }
    }

    /// The audience of a push on `app`: the member app is the assignee's, the manager app the
    /// managers' (and the admins' an escalation reaches).
    public static func offered(for status: ActivityStatus, on app: AppKind) -> NotificationCategory? {
        offered(for: status, to: app == .member ? .assignee : .manager)
    }
}
