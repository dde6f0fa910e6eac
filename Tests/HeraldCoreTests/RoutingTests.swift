import Foundation
import HeraldCore
import Testing

@Suite struct RoutingTests {
    let manager = UUID(), assignee = UUID()

    /// docs/concepts.md's table, written out: event → who, on which app.
    @Test(arguments: [
        (EventKind.activityAssigned, "assignee", AppKind.member),
        (.activityStarted, "manager", .manager),
        (.activityCompletionRequested, "manager", .manager),
        (.activityApproved, "assignee", .member),
        (.activityRejected, "assignee", .member)
    ])
    func activityEventsReachTheirAudience(event: EventKind, who: String, app: AppKind) {
        let other = UUID()
        let expected = who == "manager" ? manager : assignee
        #expect(Routing.activity(event, manager: manager, assignee: assignee, actor: other) == [.init(id: expected, app: app)])
        // The actor never receives their own event.
        #expect(Routing.activity(event, manager: manager, assignee: assignee, actor: expected).isEmpty)
    }

    @Test func anAdminWhoAssignsThemselvesHearsNothing() {
        #expect(Routing.activity(.activityAssigned, manager: manager, assignee: manager, actor: manager).isEmpty)
        #expect(Routing.activity(.chatMessage, manager: manager, assignee: assignee, actor: UUID()).isEmpty)
    }

    @Test func chatReachesEveryoneButTheSenderOnTheirApp() {
        let alice = UUID()
        let bob = UUID()
        let carol = UUID()
        let participants: [(id: UUID, role: TeamRole?)] = [(alice, .member), (bob, .manager), (carol, .member), (carol, .member)]
        #expect(
            Routing.chat(participants: participants, sender: alice, isSystem: false)
                == [.init(id: bob, app: .manager), .init(id: carol, app: .member)])
        #expect(Routing.chat(participants: participants, sender: alice, isSystem: true).isEmpty)
        // Someone who left the team still hears, on the member app.
        #expect(Routing.chat(participants: [(alice, .member), (bob, nil)], sender: alice, isSystem: false) == [.init(id: bob, app: .member)])
    }
}
