import Foundation

/// The activity state machine of docs/concepts.md, as a pure function of the status, the action
/// and how the actor relates to the activity. No I/O: the store loads the facts, asks, and
/// applies the answer.
public enum ActivityStateMachine {
    /// How the acting person relates to the activity (or, for `assign`, to the team): who
    /// they are (their `AccessPolicy`, which says who may take which action), whether they are
    /// its assignee, and their role in its team.
    public struct Actor: Sendable, Hashable {
        public var policy: AccessPolicy
        /// The person the activity is assigned to.
        public var isAssignee: Bool
        /// Their role in the activity's team, if any.
        public var role: TeamRole?

        public init(policy: AccessPolicy, isAssignee: Bool, role: TeamRole?) {
            self.policy = policy
            self.isAssignee = isAssignee
            self.role = role
        }

        /// Someone of that standing (a tenant admin may act as a manager of any team).
        public init(isAssignee: Bool = false, isTeamManager: Bool = false, isAdmin: Bool = false) {
            self.init(policy: AccessPolicy(personID: UUID(), isAdmin: isAdmin), isAssignee: isAssignee, role: isTeamManager ? .manager : nil)
        }
    }

    /// Who is told about an event.
    public enum Audience: String, Sendable, Codable {
        /// The person the activity is assigned to, on the member app.
        case assignee
        /// The manager who assigned the activity, on the manager app.
        case manager

        public var app: AppKind {
            switch self {
            case .assignee: .member
            case .manager: .manager
            }
        }
    }

    /// What an allowed action does.
    public struct Transition: Sendable, Equatable {
        public let action: ActivityAction
        public let from: ActivityStatus?
        public let to: ActivityStatus
        public let event: EventKind
        public let audience: Audience
    }

    /// Why an action was refused.
    public enum Refusal: Error, Sendable, Equatable {
        /// The actor may not take this action on this activity.
        case forbidden(action: ActivityAction, requirement: String)
        /// The action does not apply to the current status.
        case invalidTransition(action: ActivityAction, status: ActivityStatus?, allowed: [ActivityAction])
    }

    /// Decides `action` on an activity in `status` (`nil`: it does not exist yet).
    public static func decide(_ action: ActivityAction, from status: ActivityStatus?, by actor: Actor) -> Result<Transition, Refusal> {
        guard permits(action, actor) else {
            return .failure(.forbidden(action: action, requirement: requirement(for: action)))
        }
        guard let rule = rules.first(where: { $0.action == action && $0.from == status }) else {
            return .failure(.invalidTransition(action: action, status: status, allowed: allowedActions(from: status)))
        }
        return .success(rule)
    }

    /// The actions the table allows from `status`, whoever asks.
    public static func allowedActions(from status: ActivityStatus?) -> [ActivityAction] {
        rules.filter { $0.from == status }.map(\.action)
    }

    /// The actions `actor` may take on an activity in `status` now: what the table allows
    /// from there that the access policy lets them do (an inbox item's buttons, a push's).
    public static func actions(from status: ActivityStatus, by actor: Actor) -> [ActivityAction] {
        allowedActions(from: status).filter { permits($0, actor) }
    }

    /// Who may take `action`, in words, for error messages.
    public static func requirement(for action: ActivityAction) -> String {
        switch action {
        case .assign: "a manager of the team or an admin"
        case .start, .complete: "the assignee"
        case .approve, .reject: "a manager of the activity's team or an admin, other than its assignee"
        }
    }

    static func permits(_ action: ActivityAction, _ actor: Actor) -> Bool {
        actor.policy.mayAct(action, isAssignee: actor.isAssignee, role: actor.role)
    }

    /// The event an action raises (each action raises exactly one).
    public static func event(for action: ActivityAction) -> EventKind? {
        rules.first { $0.action == action }?.event
    }

    static let rules: [Transition] = [
        Transition(action: .assign, from: nil, to: .assigned, event: .activityAssigned, audience: .assignee),
        Transition(action: .start, from: .assigned, to: .running, event: .activityStarted, audience: .manager),
        Transition(
            action: .complete, from: .running, to: .completionRequested, event: .activityCompletionRequested,
            audience: .manager),
        Transition(action: .approve, from: .completionRequested, to: .approved, event: .activityApproved, audience: .assignee),
        Transition(action: .reject, from: .completionRequested, to: .running, event: .activityRejected, audience: .assignee)
    ]
}
