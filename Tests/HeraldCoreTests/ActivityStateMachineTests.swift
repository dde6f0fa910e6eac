import Foundation
import HeraldCore
import Testing

@Suite struct ActivityStateMachineTests {
    enum Role: String, CaseIterable {
        case assignee, teamManager, admin, outsider

        var actor: ActivityStateMachine.Actor {
            switch self {
            case .assignee: .init(isAssignee: true)
            case .teamManager: .init(isTeamManager: true)
            case .admin: .init(isAdmin: true)
            case .outsider: .init()
            }
        }
    }

    /// The state machine of docs/concepts.md, written out independently of the implementation.
    static let table: [String: (to: ActivityStatus, event: EventKind, audience: ActivityStateMachine.Audience)] = [
        "assign@new": (.assigned, .activityAssigned, .assignee),
        "start@assigned": (.running, .activityStarted, .manager),
        "complete@running": (.completionRequested, .activityCompletionRequested, .manager),
        "approve@completion_requested": (.approved, .activityApproved, .assignee),
        "reject@completion_requested": (.running, .activityRejected, .assignee)
    ]

    static let mayAct: [ActivityAction: Set<Role>] = [
        .assign: [.teamManager, .admin],
        .start: [.assignee],
        .complete: [.assignee],
        .approve: [.teamManager, .admin],
        .reject: [.teamManager, .admin]
    ]

    static let statuses: [ActivityStatus?] = [nil] + ActivityStatus.allCases.map { $0 }

    @Test(arguments: statuses)
    func everyActionByEveryRoleFromThisStatus(status: ActivityStatus?) {
        let key = status?.rawValue ?? "new"
        for action in ActivityAction.allCases {
            for role in Role.allCases {
                let result = ActivityStateMachine.decide(action, from: status, by: role.actor)
                let permitted = Self.mayAct[action]?.contains(role) == true
                let expected = Self.table["\(action.rawValue)@\(key)"]
                switch result {
                case .success(let transition):
                    #expect(permitted, "\(role) may not \(action) from \(key)")
                    #expect(transition.to == expected?.to, "\(action) from \(key)")
                    #expect(transition.event == expected?.event)
                    #expect(transition.audience == expected?.audience)
                    #expect(transition.from == status)
                case .failure(.forbidden(let refused, let requirement)):
                    #expect(!permitted, "\(role) should be allowed to \(action)")
                    #expect(refused == action)
                    #expect(!requirement.isEmpty)
                case .failure(.invalidTransition(let refused, let at, let allowed)):
                    #expect(permitted && expected == nil, "\(action) from \(key) by \(role)")
                    #expect(refused == action && at == status)
                    let fromTable = Self.table.keys.filter { $0.hasSuffix("@\(key)") }.map { String($0.split(separator: "@")[0]) }
                    #expect(Set(allowed.map(\.rawValue)) == Set(fromTable))
                }
            }
        }
    }

    @Test func approvedIsFinal() {
        #expect(ActivityStateMachine.allowedActions(from: .approved).isEmpty)
        #expect(ActivityStateMachine.allowedActions(from: .completionRequested) == [.approve, .reject])
    }

    /// An admin (or a manager of the team) who is also the assignee does the assignee's part,
    /// and never decides on their own request for approval.
    @Test func theAssigneeNeverApprovesTheirOwnActivity() {
        for both in [ActivityStateMachine.Actor(isAssignee: true, isAdmin: true), .init(isAssignee: true, isTeamManager: true)] {
            #expect((try? ActivityStateMachine.decide(.start, from: .assigned, by: both).get())?.to == .running)
            #expect((try? ActivityStateMachine.decide(.complete, from: .running, by: both).get())?.to == .completionRequested)
            for action in [ActivityAction.approve, .reject] {
                guard case .failure(.forbidden(_, let requirement)) = ActivityStateMachine.decide(action, from: .completionRequested, by: both) else {
                    Issue.record("\(action) by the assignee was allowed")
                    continue
                }
                #expect(requirement.contains("other than its assignee"))
            }
        }
    }

    @Test func theAudienceNamesTheApp() {
        #expect(ActivityStateMachine.Audience.assignee.app == .member)
        #expect(ActivityStateMachine.Audience.manager.app == .manager)
    }

    @Test func eventPayloadTypes() {
        #expect(EventKind.activityCompletionRequested.payloadType == "activity_completion_requested")
        #expect(EventKind.chatMessage.payloadType == "new_message")
    }
}
