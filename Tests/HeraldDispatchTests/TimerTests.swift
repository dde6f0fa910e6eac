import Foundation
import HeraldCore
import HeraldDispatch
import HeraldEmulator
import HeraldTemplates
import HeraldTestSupport
import HeraldTesting
import Testing

@testable import HeraldStore

/// Reminders, escalation and deadline notices (docs/notifications.md), with the clock in the test's
/// hands: `fireDueTimers(at:)` is what every worker calls with the time of day; here the
/// test names the moment, so no test waits a day. The pushes go out through a real
/// dispatcher to the emulator.
@Suite struct TimerTests {

    /// A deadline five days from now (UTC), so that its timers are still ahead whenever the
    /// suite runs; `at(hh:mm)` is a moment on that date, UTC.
    struct Deadline {
        let date = LocalDate(Date().addingTimeInterval(5 * 86_400), in: .gmt)
        func at(_ time: String) throws -> Date { try instant("\(date)T\(time):00Z") }
        func plus(days: Int) throws -> Date { try at("00:00").addingTimeInterval(Double(days) * 86_400) }
        /// As the `en` templates write it: `Nov 28, 2026`.
        var written: String { TemplateVariables.formatDate(date, locale: "en") }
    }

    /// Chidi (Tokyo) has activity "Ship v2" due in five days: at 09:00 his time (00:00 UTC)
    /// he is reminded, once; when the date has ended there (15:00 UTC) he and Alice hear it
    /// is overdue, once.
    @Test func theDeadlineReminderAndOverdueComeOnTheAssigneesClock() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone", app: .member)
            try await harness.register("alice@acme.test", token: "alice-phone", app: .manager)
            let deadline = Deadline()
            let activity = try await harness.assign(priority: .p1, deadline: deadline.date.description)
            try await harness.act(.start, activity.id, by: "chidi@acme.test")
            _ = try await harness.drain(horizon: .seconds(1))
            await harness.emulator.clearMessages()

            #expect(try await harness.store.fireDueTimers(at: try deadline.at("00:00").addingTimeInterval(-60)).isEmpty)
            let soon = try await harness.store.fireDueTimers(at: try deadline.at("00:01"))
            #expect(soon.count == 1)
            guard case .fired(.deadlineSoon, _)? = soon.first else {
                Issue.record("\(soon)")
                return
            }
            // Firing again at the same moment, or later, does nothing more.
            #expect(try await harness.store.fireDueTimers(at: try deadline.at("00:02")).isEmpty)
            _ = try await harness.drain(horizon: .seconds(1))
            var messages = await harness.emulator.messages()
            #expect(messages.map(\.token) == ["chidi-phone"])
            #expect(messages.first?.body == "\(deadline.written) - Your activity Ship v2 is due today (\(deadline.written)).")
            #expect(messages.first?.title == "Deadline Today")

            await harness.emulator.clearMessages()
            #expect(try await harness.store.fireDueTimers(at: try deadline.at("14:59")).isEmpty)
            let overdue = try await harness.store.fireDueTimers(at: try deadline.at("15:01"))
            guard case .fired(.overdue, _)? = overdue.first, overdue.count == 1 else {
                Issue.record("\(overdue)")
                return
            }
            _ = try await harness.drain(horizon: .seconds(1))
            messages = await harness.emulator.messages()
            #expect(Set(messages.map(\.token)) == ["chidi-phone", "alice-phone"] && messages.count == 2)
            #expect(messages.allSatisfy { $0.body?.contains("Ship v2 assigned to Chidi Okafor is overdue: its deadline was") == true })

            let history = try await harness.history()
            #expect(history.filter { $0.event == "activity.deadline_soon" }.map(\.status) == ["sent"])
            #expect(history.filter { $0.event == "activity.overdue" }.map(\.status) == ["sent", "sent"])
            let timers = try await harness.store.withTenant(harness.tenant) { try await $0.timers(activity: activity.id) }
            #expect(timers.map(\.status) == [.fired, .fired])
        }
    }

    /// A deadline reminder that comes due while the activity waits for approval has nothing
    /// to remind of: it is skipped, with the reason; approval cancels what is left.
    @Test func deadlineTimersStandDownWhenTheActivityIsDone() async throws {
        try await DispatchHarness.with { harness in
            let deadline = Deadline()
            let activity = try await harness.assign(priority: .p2, deadline: deadline.date.description)
            try await harness.act(.start, activity.id, by: "chidi@acme.test")
            try await harness.act(.complete, activity.id, by: "chidi@acme.test")
            // Five days later: the p2 reminder (24 h) is due and fires; the deadline reminder has
            // nothing to remind of.
            let due = try await harness.store.fireDueTimers(at: try deadline.at("00:01"))
            #expect(due.contains(.skipped(.deadlineSoon, reason: "the activity is completion_requested")) && due.count == 2, "\(due)")
            try await harness.act(.approve, activity.id, by: "alice@acme.test")
            #expect(try await harness.store.fireDueTimers(at: try deadline.plus(days: 30)).isEmpty)
            let timers = try await harness.store.withTenant(harness.tenant) { try await $0.timers(activity: activity.id) }
            let byKind = Dictionary(uniqueKeysWithValues: timers.map { ($0.kind, $0) })
            #expect(byKind[.deadlineSoon]?.status == .skipped)
            #expect(byKind[.overdue]?.status == .cancelled && byKind[.overdue]?.reason == "the activity moved on (activity.approved)")
            // p2 never escalates (the defaults).
            #expect(byKind[.approvalReminder]?.status == .fired && byKind[.escalation] == nil)
        }
    }

    /// The wait for approval: a reminder to the manager and an escalation to the admins, each
    /// once; a rejection and a new request start a new wait; approval ends it.
    @Test func anUnapprovedCompletionRemindsThenEscalatesOncePerWait() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("alice@acme.test", token: "alice-manager", app: .manager)
            try await harness.register("alice@acme.test", token: "alice-member", app: .member)
            try await harness.register("root@acme.test", token: "ada-manager", app: .manager)
            _ = try await harness.store.withTenant(harness.tenant) { session in
                try await session.setPolicy(
                    try ReminderPolicy.defaults.applying(approvalReminder: "p0=1h", escalateAfter: "p0=2h"), actor: "root@acme.test")
            }
            let activity = try await harness.assign()
            try await harness.act(.start, activity.id, by: "chidi@acme.test")
            try await harness.act(.complete, activity.id, by: "chidi@acme.test")
            _ = try await harness.drain(horizon: .seconds(1))
            await harness.emulator.clearMessages()
            let asked = Date()

            #expect(try await harness.store.fireDueTimers(at: asked.addingTimeInterval(3500)).isEmpty)
            let reminder = try await harness.store.fireDueTimers(at: asked.addingTimeInterval(3700))
            guard case .fired(.approvalReminder, _)? = reminder.first, reminder.count == 1 else {
                Issue.record("\(reminder)")
                return
            }
            _ = try await harness.drain(horizon: .seconds(1))
            var messages = await harness.emulator.messages()
            #expect(messages.map(\.token) == ["alice-manager"])
            #expect(messages.first?.title == "Approval Reminder")
            #expect(
                messages.first?.body?.hasPrefix("🔻P0🔻") == true
                    && messages.first?.body?.contains("Chidi Okafor is still waiting for your approval of Ship v2") == true)

            await harness.emulator.clearMessages()
            let escalation = try await harness.store.fireDueTimers(at: asked.addingTimeInterval(7300))
            guard case .fired(.escalation, _)? = escalation.first, escalation.count == 1 else {
                Issue.record("\(escalation)")
                return
            }
            _ = try await harness.drain(horizon: .seconds(1))
            messages = await harness.emulator.messages()
            #expect(messages.map(\.token) == ["ada-manager"])
            #expect(messages.first?.title == "Activity Escalated")

            // Sent back and asked again: a new wait, with timers of its own.
            try await harness.act(.reject, activity.id, by: "alice@acme.test")
            try await harness.act(.complete, activity.id, by: "chidi@acme.test")
            var timers = try await harness.store.withTenant(harness.tenant) { try await $0.timers(activity: activity.id) }
            #expect(timers.filter { $0.kind.chasesApproval }.map(\.status) == [.fired, .pending, .fired, .pending])
            let again = try await harness.store.fireDueTimers(at: Date().addingTimeInterval(3700))
            #expect(again.count == 1)
            // Approved: the new wait's escalation is cancelled and never fires.
            try await harness.act(.approve, activity.id, by: "alice@acme.test")
            #expect(try await harness.store.fireDueTimers(at: Date().addingTimeInterval(86_400)).isEmpty)
            timers = try await harness.store.withTenant(harness.tenant) { try await $0.timers(activity: activity.id) }
            #expect(timers.filter { $0.kind == .escalation }.map(\.status) == [.fired, .cancelled])
            // The second reminder was not fanned out before the approval: it is not sent.
            _ = try await harness.drain(horizon: .seconds(1))
            let history = try await harness.history()
            let reminders = history.filter { $0.event == "activity.approval_reminder" }.sorted { $0.eventAt < $1.eventAt }
            #expect(reminders.map(\.status) == ["sent", "cancelled"])
            #expect(reminders.last?.reason == "superseded by activity.approved")
            #expect(history.filter { $0.event == "activity.escalated" }.map(\.recipient.email) == ["root@acme.test"])
        }
    }

    /// A new policy applies to what waits now, measured from the start of each wait; what
    /// it turns off is cancelled; what was sent for this wait is not sent again.
    @Test func aNewPolicyAppliesToWhatWaitsNow() async throws {
        try await DispatchHarness.with { harness in
            let activity = try await harness.assign()
            try await harness.act(.start, activity.id, by: "chidi@acme.test")
            try await harness.act(.complete, activity.id, by: "chidi@acme.test")
            func setPolicy(_ reminder: String, by email: String = "root@acme.test") async throws -> TenantSession.PolicyChange {
                try await harness.store.withTenant(harness.tenant) { session in
                    try await session.setPolicy(try session.policy().applying(approvalReminder: reminder), actor: email)
                }
            }
            await #expect(throws: StoreError.self) { _ = try await setPolicy("p0=1s", by: "alice@acme.test") }

            let off = try await setPolicy("p0=off")
            #expect(off.cancelled == 1)
            var reminders = try await harness.store.withTenant(harness.tenant) { try await $0.timers(activity: activity.id) }
                .filter { $0.kind == .approvalReminder }
            #expect(reminders.map(\.status) == [.cancelled] && reminders.first?.reason == "turned off by the tenant's policy")

            // One second after the request: due (a few seconds from now at the latest).
            _ = try await setPolicy("p0=1s")
            let fired = try await harness.store.fireDueTimers(at: Date().addingTimeInterval(5))
            #expect(fired.count == 1)
            _ = try await setPolicy("p0=2s")
            #expect(try await harness.store.fireDueTimers(at: Date().addingTimeInterval(60)).isEmpty)
            reminders = try await harness.store.withTenant(harness.tenant) { try await $0.timers(activity: activity.id) }
                .filter { $0.kind == .approvalReminder }
            #expect(reminders.map(\.status) == [.fired])
            #expect(try await harness.store.withTenant(harness.tenant) { try await $0.policy() }.approvalReminder.p0?.seconds == 2)
        }
    }

    /// A timer whose firing the database refuses every time (here, its event in the outbox)
    /// is skipped with the error as its reason; the timer behind it still fires.
    @Test func aTimerTheDatabaseRefusesIsSkippedAndTheNextFires() async throws {
        try await DispatchHarness.with { harness in
            let deadline = Deadline()
            let refused = try await harness.assign(name: "Refused", deadline: deadline.date.description)
            let other = try await harness.assign(name: "Other", deadline: deadline.date.description)
            try await PoisonEventTests.refuse(harness, table: "outbox", where: "NEW.activity_id = '\(refused.id.uuidString.lowercased())'")

            let firings = try await harness.store.fireDueTimers(at: try deadline.at("00:01"))
            #expect(firings.count == 2, "\(firings)")
            #expect(firings.contains { if case .fired(.deadlineSoon, _) = $0 { true } else { false } })
            #expect(
                firings.contains {
                    if case .skipped(.deadlineSoon, let reason) = $0 {
                        reason.hasPrefix("could not be fired: ") && reason.contains("is refused")
                    } else {
                        false
                    }
                }, "\(firings)")
            let timers = try await harness.store.withTenant(harness.tenant) { session in
                (try await session.timers(activity: refused.id), try await session.timers(activity: other.id))
            }
            #expect(timers.0.first { $0.kind == .deadlineSoon }?.status == .skipped)
            #expect(timers.1.first { $0.kind == .deadlineSoon }?.status == .fired)
            // Settled: nothing is tried again.
            #expect(try await harness.store.fireDueTimers(at: try deadline.at("00:02")).isEmpty)
        }
    }

    /// A burst (five deadline reminders due at one instant) fired two at a time: each look
    /// starts after the last timer the one before took, in (due time, id) order, so it never
    /// walks the timers already fired. A timer written meanwhile with an earlier due time is
    /// passed over by the burst and found by the next look from the beginning.
    @Test func aBurstIsFiredABatchAtATimeEachLookStartingWhereTheLastEnded() async throws {
        try await DispatchHarness.with { harness in
            let deadline = Deadline()
            for index in 1...5 { _ = try await harness.assign(priority: .p3, name: "Ship v\(index)", deadline: deadline.date.description) }
            let soon = "SELECT count(*) FROM activity_timers WHERE kind = 'deadline_soon'"
            #expect(try await harness.count(soon + " AND status = 'pending' AND due_at = '\(deadline.date)T00:00:00Z'") == 5)
            let moment = try deadline.at("00:01")
            let first = try await harness.store.fireDueTimers(at: moment, limit: 2, tenants: [], after: nil)
            #expect(first.firings.count == 2)
            let cursor = try #require(first.next)
            // One still pending is moved before the cursor, as if written meanwhile.
            try await harness.store.pool.query(
                "UPDATE activity_timers SET due_at = due_at - interval '1 minute' WHERE id = (SELECT id FROM activity_timers WHERE kind = 'deadline_soon' AND status = 'pending' ORDER BY id LIMIT 1)"
            )
            let second = try await harness.store.fireDueTimers(at: moment, limit: 2, tenants: [], after: cursor)
            #expect(second.firings.count == 2)
            let secondEnd = try #require(second.next)
            let third = try await harness.store.fireDueTimers(at: moment, limit: 2, tenants: [], after: secondEnd)
            #expect(third.firings.isEmpty && third.next == nil, "the one moved back is behind the burst")
            #expect(try await harness.count(soon + " AND status = 'pending'") == 1)
            let again = try await harness.store.fireDueTimers(at: moment, limit: 2, tenants: [], after: nil)
            #expect(again.firings.count == 1)
            #expect(try await harness.count(soon + " AND status = 'fired'") == 5)
        }
    }
}
