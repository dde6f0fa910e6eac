import Foundation
import HeraldCore
import HeraldTesting
import Testing

/// Escalation by engagement (docs/notifications.md#not-opened): the `unopened` timer.
struct UnopenedTimerTests {
    static let since = Date(timeIntervalSince1970: 1_795_303_800)  // 2026-11-21 23:30 UTC
    static let policy = (try? ReminderPolicy.defaults.applying(unopened: "p0=15m,p1=4h")) ?? .defaults

    @Test func anAssignmentAndARequestForApprovalWaitToBeOpened() throws {
        #expect(ReminderPolicy.defaults.unopened == .allOff)
        for status in [ActivityStatus.assigned, .completionRequested] {
            #expect(
                ActivityTimers.unopenedTimers(enteringStatus: status, version: 3, at: Self.since, priority: .p0, policy: Self.policy)
                    == [PlannedTimer(kind: .unopened, period: 3, dueAt: Self.since.addingTimeInterval(900))])
        }
        #expect(
            ActivityTimers.unopenedTimers(enteringStatus: .assigned, version: 1, at: Self.since, priority: .p1, policy: Self.policy).map(\.dueAt)
                == [Self.since.addingTimeInterval(4 * 3600)])
        // Off for p2 here, off everywhere by default, and nobody is asked to act while it runs.
        #expect(ActivityTimers.unopenedTimers(enteringStatus: .assigned, version: 1, at: Self.since, priority: .p2, policy: Self.policy).isEmpty)
        #expect(ActivityTimers.unopenedTimers(enteringStatus: .assigned, version: 1, at: Self.since, priority: .p0, policy: .defaults).isEmpty)
        for status in [ActivityStatus.running, .approved] {
            #expect(ActivityTimers.unopenedTimers(enteringStatus: status, version: 2, at: Self.since, priority: .p0, policy: Self.policy).isEmpty)
        }
        #expect(ActivityTimers.openingAwaited(in: .assigned)?.event == .activityAssigned)
        #expect(ActivityTimers.openingAwaited(in: .completionRequested)?.audience == .manager)
    }

    @Test func itFiresOnlyWhileTheItemIsUnreadAndTheActivityStillWaits() throws {
        let now = Self.since.addingTimeInterval(900)
        func subject(_ status: ActivityStatus, version: Int = 3, _ item: ActivityTimers.AwaitedItem) throws -> ActivityTimers.Subject {
            .init(status: status, version: version, deadline: try #require(LocalDate("2026-11-28")), timeZone: .gmt, awaitedItem: item)
        }
        #expect(ActivityTimers.decide(.unopened, period: 3, activity: try subject(.assigned, .unread), now: now) == .fire)
        #expect(ActivityTimers.decide(.unopened, period: 3, activity: try subject(.completionRequested, .unread), now: now) == .fire)
        let read = Self.since.addingTimeInterval(60)
        #expect(
            ActivityTimers.decide(.unopened, period: 3, activity: try subject(.assigned, .read(at: read)), now: now)
                == .skip(reason: "the item was read at 2026-11-21T23:31:00Z"))
        #expect(
            ActivityTimers.decide(.unopened, period: 3, activity: try subject(.assigned, .archived(at: read)), now: now)
                == .skip(reason: "the item was archived at 2026-11-21T23:31:00Z"))
        #expect(
            ActivityTimers.decide(.unopened, period: 3, activity: try subject(.assigned, .absent), now: now)
                == .skip(reason: "they were not told of it (no item to open)"))
        // A worker behind: the assignment is not fanned out yet, so nobody could have opened it.
        #expect(ActivityTimers.decide(.unopened, period: 3, activity: try subject(.assigned, .notYetWritten), now: now) == .later)
        // Started, or rejected and asked again: this wait is over.
        #expect(
            ActivityTimers.decide(.unopened, period: 3, activity: try subject(.running, version: 4, .unread), now: now)
                == .skip(reason: "the activity moved on (it is running now)"))
        #expect(
            ActivityTimers.decide(.unopened, period: 3, activity: try subject(.completionRequested, version: 5, .unread), now: now)
                == .skip(reason: "the activity moved on (it is completion_requested now)"))
    }

    @Test func theLatePersonHearsAgainAndThoseAboveThemAreTold() {
        let manager = UUID()
        let assignee = UUID()
        let admin = UUID()
        #expect(
            Routing.timer(.unopened, waiting: .assigned, manager: manager, assignee: assignee, admins: [admin])
                == [.init(id: assignee, app: .member), .init(id: manager, app: .manager)])
        // A manager who is an admin too is told once.
        #expect(
            Routing.timer(.unopened, waiting: .completionRequested, manager: manager, assignee: assignee, admins: [admin, manager])
                == [.init(id: manager, app: .manager), .init(id: admin, app: .manager)])
        #expect(Routing.timer(.unopened, waiting: .running, manager: manager, assignee: assignee, admins: [admin]).isEmpty)
    }

    @Test func thePolicyDocumentMayLeaveItOutOrNameSomePriorities() throws {
        let decoder = JSONDecoder()
        let older = """
            {"approvalReminder": {"p0": "30m", "p1": "4h", "p2": "24h", "p3": "off"},
             "escalateAfter": {"p0": "2h", "p1": "24h", "p2": "off", "p3": "off"}, "deadlineReminderAt": "09:00", "overdue": true}
            """
        #expect(try decoder.decode(ReminderPolicy.self, from: Data(older.utf8)) == .defaults)
        let newer = older.replacingOccurrences(of: "\"overdue\": true", with: "\"overdue\": true, \"unopened\": {\"p0\": \"15m\", \"p1\": \"4h\"}")
        let policy = try decoder.decode(ReminderPolicy.self, from: Data(newer.utf8))
        #expect(policy == Self.policy)
        // Written back in full, it reads the same.
        #expect(try decoder.decode(ReminderPolicy.self, from: try JSONEncoder().encode(policy)) == policy)
        let wrong = older.replacingOccurrences(of: "\"overdue\": true", with: "\"overdue\": true, \"unopened\": {\"p9\": \"15m\"}")
        #expect(throws: DecodingError.self) { try decoder.decode(ReminderPolicy.self, from: Data(wrong.utf8)) }
        #expect(throws: InputError.self) { try ReminderPolicy.defaults.applying(unopened: "p0=soon") }
    }
}
