import Foundation
import HeraldCore
import HeraldPostgres

/// What a transition does to its activity's timers, written in the statement that appends
/// its event (no round trip of its own): the pending timers of the kinds it ends are
/// cancelled, and the ones it starts are written.
struct TimerChanges: Sendable {
    var activityID: UUID
    /// Pending timers of these kinds are cancelled with `reason`.
    var ended: Set<TimerKind>
    var reason: String
    var started: [PlannedTimer]
    /// When the wait the started timers chase began.
    var waitingSince: Date

    /// The timers of a change into `status` (version `version`, at `at`): the waits it ends,
    /// the approval wait it begins.
    static func transition(
        _ transition: ActivityStateMachine.Transition, activity: ActivityRecord, policy: ReminderPolicy
    ) -> TimerChanges {
        TimerChanges(
            activityID: activity.id, ended: ActivityTimers.ended(leaving: transition.from, entering: transition.to),
            reason: "the activity moved on (\(transition.event.rawValue))",
            started: ActivityTimers.approvalTimers(
                enteringStatus: transition.to, version: activity.version, at: activity.updatedAt, priority: activity.priority,
                policy: policy)
                + ActivityTimers.unopenedTimers(
                    enteringStatus: transition.to, version: activity.version, at: activity.updatedAt, priority: activity.priority,
                    policy: policy),
            waitingSince: activity.updatedAt)
    }

    /// The timers of a new activity whose assignee lives in `timeZone`: the deadline timers
    /// due after the assignment (the assignment's push already names a deadline that is today
    /// or past), and its wait to be opened.
    static func assignment(of activity: ActivityRecord, timeZone: String, policy: ReminderPolicy) -> TimerChanges {
        let zone = TimeZone.named(timeZone)
        return TimerChanges(
            activityID: activity.id, ended: [], reason: "",
            started: ActivityTimers.deadlineTimers(deadline: activity.deadline, timeZone: zone, policy: policy)
                .filter { $0.dueAt > activity.createdAt }
                + ActivityTimers.unopenedTimers(
                    enteringStatus: activity.status, version: activity.version, at: activity.createdAt, priority: activity.priority,
                    policy: policy),
            waitingSince: activity.createdAt)
    }
}

extension PostgresQuery.StringInterpolation {
    /// `, timers_ended AS (…), timers_started AS (…)`: common table expressions that apply
    /// `changes` in the tenant `tenant` (nothing for `nil`).
    mutating func appendInterpolation(timers changes: TimerChanges?, tenant: UUID) {
        guard let changes else { return }
        if !changes.ended.isEmpty {
            appendLiteral(
                """
                , timers_ended AS (
                    UPDATE activity_timers SET status = 'cancelled', reason = 
                """)
            appendInterpolation(changes.reason)
            appendLiteral(", settled_at = now() WHERE tenant_id = ")
            appendInterpolation(tenant)
            appendLiteral(" AND activity_id = ")
            appendInterpolation(changes.activityID)
            appendLiteral(" AND status = 'pending' AND kind = ANY(")
            appendInterpolation(changes.ended.map(\.rawValue).sorted())
            appendLiteral("::text[]))")
        }
        if !changes.started.isEmpty {
            appendLiteral(
                """
                , timers_started AS (
                    INSERT INTO activity_timers (tenant_id, id, activity_id, kind, period, due_at, waiting_since)
                    SELECT 
                """)
            appendInterpolation(tenant)
            appendLiteral(", s.id, ")
            appendInterpolation(changes.activityID)
            appendLiteral(", s.kind, s.period, s.due_at, ")
            appendInterpolation(changes.waitingSince)
            appendLiteral(" FROM unnest(")
            appendInterpolation(changes.started.map { _ in UUID.v7() })
            appendLiteral("::uuid[], ")
            appendInterpolation(changes.started.map(\.kind.rawValue))
            appendLiteral("::text[], ")
            appendInterpolation(changes.started.map(\.period))
            appendLiteral("::int[], ")
            appendInterpolation(changes.started.map(\.dueAt))
            appendLiteral("::timestamptz[]) AS s(id, kind, period, due_at))")
        }
    }
}
