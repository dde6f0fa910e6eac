import Foundation
import HeraldCore
import HeraldTesting
import Testing

struct ActivityTimersTests {
    static let since = Date(timeIntervalSince1970: 1_795_303_800)  // 2026-11-21 23:30 UTC
    static func zone(_ name: String) throws -> TimeZone { try #require(TimeZone(identifier: name)) }
    static func date(_ text: String) throws -> LocalDate { try #require(LocalDate(text)) }

    @Test func aCompletionRequestStartsAReminderAndAnEscalationForItsVersion() {
        let timers = ActivityTimers.approvalTimers(
            enteringStatus: .completionRequested, version: 4, at: Self.since, priority: .p0, policy: .defaults)
        #expect(
            timers == [
                PlannedTimer(kind: .approvalReminder, period: 4, dueAt: Self.since.addingTimeInterval(1800)),
                PlannedTimer(kind: .escalation, period: 4, dueAt: Self.since.addingTimeInterval(7200))
            ])
        // p3 chases nothing by default; no other status starts an approval wait.
        #expect(
            ActivityTimers.approvalTimers(enteringStatus: .completionRequested, version: 4, at: Self.since, priority: .p3, policy: .defaults).isEmpty)
        for status in [ActivityStatus.assigned, .running, .approved] {
            #expect(ActivityTimers.approvalTimers(enteringStatus: status, version: 4, at: Self.since, priority: .p0, policy: .defaults).isEmpty)
        }
    }

    @Test func leavingTheWaitEndsItsTimersAndApprovalEndsEverything() {
        #expect(ActivityTimers.ended(leaving: .completionRequested, entering: .running) == [.approvalReminder, .escalation, .unopened])
        #expect(ActivityTimers.ended(leaving: .completionRequested, entering: .approved) == Set(TimerKind.allCases))
        // Nothing of a wait for approval is pending before one begins.
        #expect(ActivityTimers.ended(leaving: nil, entering: .assigned).isEmpty)
        #expect(ActivityTimers.ended(leaving: .assigned, entering: .running) == [.unopened])
        #expect(ActivityTimers.ended(leaving: .running, entering: .completionRequested).isEmpty)
    }

    @Test func deadlineTimersFollowTheAssigneesClock() throws {
        let timers = ActivityTimers.deadlineTimers(deadline: try Self.date("2026-11-28"), timeZone: try Self.zone("Asia/Tokyo"), policy: .defaults)
        #expect(
            timers == [
                PlannedTimer(kind: .deadlineSoon, period: 0, dueAt: try instant("2026-11-28T00:00:00Z")),  // 09:00 in Tokyo
                PlannedTimer(kind: .overdue, period: 0, dueAt: try instant("2026-11-28T15:00:00Z"))  // midnight in Tokyo
            ])
        let off = try ReminderPolicy.defaults.applying(deadlineReminderAt: "off", overdue: "off")
        #expect(ActivityTimers.deadlineTimers(deadline: try Self.date("2026-11-28"), timeZone: .gmt, policy: off).isEmpty)
    }

    @Test func aDaylightSavingChangeIsHandled() throws {
        // Berlin moves from 02:00 to 03:00 on 2026-03-29: that day has 23 hours, and 02:30 does not exist.
        let berlin = try Self.zone("Europe/Berlin")
        let policy = try ReminderPolicy.defaults.applying(deadlineReminderAt: "02:30")
        let timers = ActivityTimers.deadlineTimers(deadline: try Self.date("2026-03-29"), timeZone: berlin, policy: policy)
        #expect(timers.map(\.dueAt) == [try instant("2026-03-29T01:30:00Z"), try instant("2026-03-29T22:00:00Z")])
        // New York falls back on 2026-11-01: 25 hours, and the overdue mark is the next local midnight.
        let york = ActivityTimers.deadlineTimers(
            deadline: try Self.date("2026-11-01"), timeZone: try Self.zone("America/New_York"), policy: .defaults)
        #expect(york.map(\.dueAt) == [try instant("2026-11-01T14:00:00Z"), try instant("2026-11-02T05:00:00Z")])
    }

    @Test func aDueTimerFiresOnlyWhileTheActivityStillWaitsForIt() throws {
        let now = try instant("2026-11-28T10:00:00Z")
        func subject(_ status: ActivityStatus, version: Int = 4) throws -> ActivityTimers.Subject {
            .init(status: status, version: version, deadline: try Self.date("2026-11-28"), timeZone: .gmt)
        }
        #expect(ActivityTimers.decide(.approvalReminder, period: 4, activity: try subject(.completionRequested), now: now) == .fire)
        #expect(
            ActivityTimers.decide(.escalation, period: 4, activity: try subject(.approved, version: 5), now: now)
                == .skip(reason: "the activity moved on (it is approved now)"))
        // Rejected and asked again: the old wait's timers do not fire for the new one.
        #expect(
            ActivityTimers.decide(.approvalReminder, period: 4, activity: try subject(.completionRequested, version: 6), now: now)
                == .skip(reason: "the activity moved on (it is completion_requested now)"))
        #expect(ActivityTimers.decide(.deadlineSoon, period: 0, activity: try subject(.running), now: now) == .fire)
        #expect(
            ActivityTimers.decide(.deadlineSoon, period: 0, activity: try subject(.completionRequested), now: now)
                == .skip(reason: "the activity is completion_requested"))
        #expect(
            ActivityTimers.decide(.deadlineSoon, period: 0, activity: try subject(.assigned), now: try instant("2026-11-29T00:00:00Z"))
                == .skip(reason: "the deadline date had ended when the reminder came due"))
        #expect(ActivityTimers.decide(.overdue, period: 0, activity: try subject(.completionRequested), now: now) == .fire)
        #expect(ActivityTimers.decide(.overdue, period: 0, activity: try subject(.approved), now: now) == .skip(reason: "the activity is approved"))
    }

    @Test func timerEventsGoToTheirAudienceOnTheRightApp() {
        let manager = UUID()
        let assignee = UUID()
        let admin = UUID()
        #expect(
            Routing.timer(.approvalReminder, waiting: .completionRequested, manager: manager, assignee: assignee, admins: [admin]) == [
                .init(id: manager, app: .manager)
            ])
        #expect(
            Routing.timer(.escalation, waiting: .completionRequested, manager: manager, assignee: assignee, admins: [admin, manager, admin])
                == [.init(id: admin, app: .manager), .init(id: manager, app: .manager)])
        #expect(
            Routing.timer(.deadlineSoon, waiting: .running, manager: manager, assignee: assignee, admins: []) == [.init(id: assignee, app: .member)])
        #expect(
            Routing.timer(.overdue, waiting: .running, manager: manager, assignee: assignee, admins: [])
                == [.init(id: assignee, app: .member), .init(id: manager, app: .manager)])
        #expect(
            TimerKind.allCases.map(\.event.rawValue)
                == ["activity.approval_reminder", "activity.escalated", "activity.deadline_soon", "activity.overdue", "activity.unopened"])
    }
}
