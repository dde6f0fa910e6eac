import Foundation
import HeraldCore
import HeraldStore
import HeraldTemplates

/// The Live Activity pushes of activity events (docs/apps.md), beside their notifications:
/// `LiveActivityPlan` decides, this puts the words to it.
extension FanOut {
    /// Whom a P0 activity's event may need the profile of for its Live Activity: the assignee
    /// (whose clock ends the deadline) and the manager (a start's alert is in their words).
    static func liveActivityPeople(_ payload: Payload) -> [EventRecipient] {
        guard case .activity(let activity) = payload.snapshot, activity.priority == .p0 else { return [] }
        return LiveActivityPlan.audience(assignee: activity.assignee.id, manager: activity.manager.id).map {
            EventRecipient(id: $0.person, app: $0.app)
        }
    }

    /// The Live Activity push of one event, nil when it makes none.
    func liveActivityDraft(
        for event: ClaimedEvent, _ payload: Payload, profiles: [DeliveryQueue.Key: RecipientProfile], templates: TenantTemplates
    ) throws -> LiveActivityDraft? {
        // (Most events are of no P0, and most people have no Live Activity token: nothing more
        // is done for them, and no statement is run.)
        guard case .activity(let activity) = payload.snapshot, activity.priority == .p0 else { return nil }
        let assignee = profiles[DeliveryQueue.Key(id: activity.assignee.id, app: .member)]
        let manager = profiles[DeliveryQueue.Key(id: activity.manager.id, app: .manager)]
        guard assignee?.followsLiveActivities == true || manager?.followsLiveActivities == true else { return nil }
        let clock = assignee.map { TimeZone.named($0.timeZone) } ?? .utc
        guard let push = LiveActivityPlan.push(for: activity, assigneeTimeZone: clock) else { return nil }
        let variables = TemplateVariables.Activity(activity)
        var starts: [LiveActivityDraft.Start] = []
        for audience in push.starts {
            // Someone deleted since has no profile, and no phone to start it on.
            guard let profile = profiles[DeliveryQueue.Key(id: audience.person, app: audience.app)] else { continue }
            let message = try templates.template(for: .liveActivityStart, locale: profile.locale).render(
                variables, for: .init(locale: profile.locale, timeZone: profile.timeZone))
            starts.append(.init(person: audience.person, app: audience.app, title: message.title, body: message.body))
        }
        if push.content.event == .start, starts.isEmpty { return nil }
        return LiveActivityDraft(
            eventID: event.id, activityID: activity.activityID, teamID: activity.teamID, content: push.content, starts: starts,
            title: activity.activityName, body: "Live Activity \(push.content.event.rawValue): \(activity.status.rawValue)",
            eventAt: activity.occurredAt)
    }
}
