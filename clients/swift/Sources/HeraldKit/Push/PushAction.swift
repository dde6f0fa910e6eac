import Foundation

/// The buttons on Herald's pushes (docs/apps.md, "Buttons on a push"), and what pressing one
/// does: the transition, with the version the push carried. Pure, so it is tested on Linux;
/// `HeraldPushes` connects it to the system on Apple platforms.
public enum PushAction: String, Sendable, CaseIterable {
    /// On an assignee's push of an assigned activity (category `ACTIVITY_ASSIGNED`).
    case start = "START"
    /// On a manager's push of an activity awaiting approval (category `ACTIVITY_APPROVAL`).
    case approve = "APPROVE"
    case sendBack = "SEND_BACK"

    public var transition: Transition {
        switch self {
        case .start: .start
        case .approve: .approve
        case .sendBack: .reject
        }
    }

    /// The categories and their actions, to register with the system.
    public static let categories: [String: [PushAction]] = [
        "ACTIVITY_ASSIGNED": [.start],
        "ACTIVITY_APPROVAL": [.approve, .sendBack]
    ]
}

/// An activity push as the app received it: its `data` (or the APNs payload beside `aps`).
public struct ActivityPush: Sendable, Equatable {
    public var activity: UUID
    /// The activity's version when the push was sent (`If-Match`).
    public var version: Int
    public var category: String?

    /// Reads a push's payload (`userInfo`, or FCM's `data`); `nil` for a push that is not an
    /// activity's (a chat message's, say).
    public init?(payload: [AnyHashable: Any]) {
        func text(_ key: String) -> String? {
            if let value = payload[key] as? String { return value }
            if let value = payload[key] as? Int { return String(value) }
            return nil
        }
        guard let id = text("activityId").flatMap(UUID.init(uuidString:)), let version = text("version").flatMap(Int.init) else {
            return nil
        }
        activity = id
        self.version = version
        category = text("category")
    }
}

/// What pressing a button came to.
public enum PushActionOutcome: Sendable, Equatable {
    /// Done: the activity after it.
    case done(Activity)
    /// The activity changed since the push (`412`): nothing was done; show it again.
    case stale
    /// Not allowed from its status now (`409`), or not this person's to do.
    case notAllowed(String)
}

extension HeraldClient {
    /// Performs a push's button: the transition with the pushed version, so that a manager never
    /// approves a version they did not see. A stale push is `.stale`, never a wrong approval.
    public func perform(_ action: PushAction, on push: ActivityPush, reason: String? = nil) async throws -> PushActionOutcome {
        do {
            return .done(try await transition(push.activity, action.transition, ifVersion: push.version, reason: reason))
        } catch HeraldError.versionConflict {
            return .stale
        } catch HeraldError.conflict(let problem) {
            return .notAllowed(problem.detail)
        } catch HeraldError.forbidden(let problem) {
            return .notAllowed(problem.detail)
        }
    }
}
