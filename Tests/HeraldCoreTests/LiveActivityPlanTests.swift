import Foundation
import Testing

@testable import HeraldCore

/// Which Live Activity push an activity event makes (docs/apps.md).
@Suite struct LiveActivityPlanTests {
    static let assignee = PersonReference(id: UUID(), email: "chidi@acme.test", name: "Chidi Okafor")
    static let manager = PersonReference(id: UUID(), email: "alice@acme.test", name: "Alice Moreau")
    /// 2026-11-21 10:00 UTC.
    static let at = Date(timeIntervalSince1970: 1_795_255_200)

    static func event(
        _ kind: EventKind, status: ActivityStatus, priority: Priority = .p0, waitingSince: Date? = nil
    ) -> ActivityEventPayload {
        ActivityEventPayload(
            event: kind, activityID: UUID(), teamID: UUID(), teamName: "Field Ops", activityName: "Fix the pump", priority: priority,
            deadline: LocalDate("2026-11-28") ?? LocalDate(at, in: .gmt), status: status, actor: manager, manager: manager,
            assignee: assignee, recipients: [], reason: nil, occurredAt: at, waitingSince: waitingSince, version: 1)
    }

    @Test func aP0StartsForItsTwoPeopleUpdatesAndEnds() throws {
        let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        let start = try #require(LiveActivityPlan.push(for: Self.event(.activityAssigned, status: .assigned), assigneeTimeZone: tokyo))
        #expect(start.content.event == .start && start.content.priority == 10)
        #expect(start.starts == [.init(person: Self.assignee.id, app: .member), .init(person: Self.manager.id, app: .manager)])
        #expect(start.content.attributes?.name == "Fix the pump" && start.content.attributes?.team == "Field Ops")
        // Stale when the deadline ends on the assignee's clock: 2026-11-29 00:00 in Tokyo.
        #expect(start.content.staleDate == 1_795_878_000)
        #expect(start.content.timestamp == 1_795_255_200 && start.content.dismissalDate == nil)

        let requested = try #require(
            LiveActivityPlan.push(for: Self.event(.activityCompletionRequested, status: .completionRequested), assigneeTimeZone: tokyo))
        #expect(requested.content.event == .update && requested.starts.isEmpty && requested.content.attributes == nil)
        #expect(requested.content.contentState.waitingSince == 1_795_255_200 && requested.content.contentState.status == "completion_requested")

        let waitedSince = Self.at.addingTimeInterval(-5400)
        let reminder = try #require(
            LiveActivityPlan.push(
                for: Self.event(.activityApprovalReminder, status: .completionRequested, waitingSince: waitedSince), assigneeTimeZone: tokyo))
        #expect(reminder.content.priority == 5 && reminder.content.contentState.waitingSince == 1_795_249_800)

        let running = try #require(LiveActivityPlan.push(for: Self.event(.activityRejected, status: .running), assigneeTimeZone: tokyo))
        #expect(running.content.priority == 10 && running.content.contentState.waitingSince == nil)

        let end = try #require(LiveActivityPlan.push(for: Self.event(.activityApproved, status: .approved), assigneeTimeZone: tokyo))
        #expect(end.content.event == .end && end.content.dismissalDate == 1_795_255_200 + 4 * 3600 && end.content.staleDate == nil)
    }

    @Test func otherPrioritiesHaveNone() {
        for priority in [Priority.p1, .p2, .p3] {
            #expect(LiveActivityPlan.push(for: Self.event(.activityAssigned, status: .assigned, priority: priority), assigneeTimeZone: .gmt) == nil)
        }
    }
}
