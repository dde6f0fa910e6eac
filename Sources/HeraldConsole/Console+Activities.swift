import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import Hummingbird

extension Console {
    /// An activity's timeline: each transition, and for the event it raised who was
    /// notified, on which devices, and why not where nothing went out; then its reminders.
    func addActivities(to console: RouterGroup<APIContext>) {
        console.get("activities/:id") { request, context in
            await page {
                let session = try await requireSession(request)
                let viewer = session.authentication.person
                guard let id = UUID(uuidString: try context.parameters.require("id")) else { throw Self.notFound(session) }
                let (activity, transitions, notified, timers, queued) = try await store.withTenant(session.authentication.tenant) { tenant in
                    let activity: ActivityRecord
                    do {
                        activity = try await tenant.activity(id: id, viewer: viewer)
                    } catch let error as StoreError where error.code == .notFound {
                        throw Self.notFound(session)
                    }
                    let transitions = try await tenant.transitions(activity: id)
                    // What the viewer may see of who was notified (a member: only their own).
                    let entries = try await tenant.history(viewer: viewer, filter: HistoryFilter(activity: id.uuidString, limit: 200))
                    var details: [HistoryDetail] = []
                    for entry in entries { details.append(try await tenant.historyDetail(viewer: viewer, id: entry.id)) }
                    // Events not fanned out yet have no notification: say they are queued.
                    let queued = try await tenant.queuedEvents(activity: id, viewer: viewer)
                    return (activity, transitions, details, try await tenant.timers(activity: id), queued)
                }
                // Each step raised its event at the very moment it was recorded (one statement,
                // one clock reading), which tells apart two steps of the same kind.
                let steps: [[String: Any]] = transitions.map { step in
                    let event = ActivityStateMachine.event(for: step.action)?.rawValue
                    let items =
                        notified
                        .filter { $0.notification.event == event && abs($0.notification.eventAt.timeIntervalSince(step.at)) < 0.001 }
                        .sorted { $0.notification.recipient.name < $1.notification.recipient.name }
                        .map { detail -> [String: Any] in
                            var row = Self.row(detail.notification)
                            row["deliveries"] = detail.deliveries.map(Self.delivery)
                            return row
                        }
                    var values: [String: Any] = [
                        "action": step.action.rawValue, "actor": step.actor.name, "at": Self.shown(step.at),
                        "from": step.from?.rawValue ?? "new", "to": step.to.rawValue
                    ]
                    if let reason = step.reason { values["reason"] = reason }
                    if !items.isEmpty { values["notifications"] = ["items": items] }
                    if items.isEmpty,
                        let waiting = queued.first(where: { $0.event == event && abs($0.at.timeIntervalSince(step.at)) < 0.001 })?.queued
                    {
                        var shown: [String: Any] = ["since": Self.shown(waiting.since), "candidates": waiting.candidates]
                        if !waiting.people.isEmpty { shown["people"] = waiting.people.map(\.name).joined(separator: ", ") }
                        values["queued"] = shown
                    }
                    return values
                }
                // The reminders: when each is due, what became of it, and whom a fired one told.
                let reminders: [[String: Any]] = timers.map { timer in
                    var values: [String: Any] = [
                        "event": timer.kind.event.rawValue, "due": Self.shown(timer.dueAt), "status": timer.status.rawValue
                    ]
                    if let reason = timer.reason { values["reason"] = reason }
                    let told = notified.filter { $0.notification.eventID == timer.eventID }.map { Self.row($0.notification) }
                    if !told.isEmpty { values["told"] = told }
                    return values
                }
                return html(
                    "activity",
                    [
                        "pageTitle": activity.name, "name": activity.name, "id": activity.id.lowercasedString, "team": activity.team.name,
                        "priority": activity.priority.rawValue,
                        "deadline": activity.deadline.description, "status": activity.status.rawValue, "version": activity.version,
                        "assigneeName": activity.assignee.name, "assigneeEmail": activity.assignee.email,
                        "assigneePath": pathSegment(activity.assignee.email), "managerName": activity.manager.name,
                        "steps": steps, "reminders": reminders, "hasReminders": !reminders.isEmpty
                    ], session: session)
            }
        }
    }

    /// The same answer for what the viewer may not see as for what does not exist.
    static func notFound(_ session: ConsoleSession) -> ConsoleRefusal {
        ConsoleRefusal(status: .notFound, heading: "Not found", detail: "Nothing here, or nothing you may see.", session: session)
    }
}
