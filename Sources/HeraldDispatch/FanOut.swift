import Foundation
import HeraldCore
import HeraldTemplates

/// Turns claimed events into notifications: who hears (the routing the event's snapshot
/// carries), in which words (the recipient's locale and time zone), with which badge.
struct FanOut: Sendable {
    let templates: TemplateCatalog

    enum Failure: Error, CustomStringConvertible {
        case unreadable(event: UUID, reason: String)

        var description: String {
            switch self {
            case .unreadable(let event, let reason): "event \(event.uuidString.lowercased()) cannot be read: \(reason)"
            }
        }
    }

    /// The recipients an event names (read from its snapshot).
    static func recipients(of event: ClaimedEvent) throws -> [ActivityEventPayload.Recipient] {
        try activityPayload(event).recipients
    }

    static func activityPayload(_ event: ClaimedEvent) throws -> ActivityEventPayload {
        do {
            return try JSONDecoder().decode(ActivityEventPayload.self, from: Data(event.payload.utf8))
        } catch {
            throw Failure.unreadable(event: event.id, reason: "\(error)")
        }
    }

    /// The notification drafts of one activity event.
    func drafts(for event: ClaimedEvent, profiles: [DeliveryQueue.Key: RecipientProfile]) async throws -> [NotificationDraft] {
        let payload = try Self.activityPayload(event)
        guard let templateEvent = TemplateEvent(payload.event) else {
            throw Failure.unreadable(event: event.id, reason: "\(payload.event.rawValue) is not an activity event")
        }
        let variables = TemplateVariables.Activity(payload)
        var drafts: [NotificationDraft] = []
        for recipient in payload.recipients {
            // A person deleted since the event has no profile: nobody to tell.
            guard let profile = profiles[DeliveryQueue.Key(id: recipient.id, app: recipient.app)] else { continue }
            let template = try await templates.template(for: templateEvent, locale: profile.locale, tenant: event.tenantID)
            let message = template.render(variables, for: .init(locale: profile.locale, timeZone: profile.timeZone))
            drafts.append(
                NotificationDraft(
                    eventID: event.id, kind: payload.event, recipientID: recipient.id, app: recipient.app, teamID: payload.teamID,
                    activityID: payload.activityID, conversationID: nil, title: message.title, body: message.body,
                    data: [
                        "type": payload.event.payloadType, "activityId": payload.activityID.uuidString.lowercased(),
                        "teamId": payload.teamID.uuidString.lowercased(), "priority": payload.priority.rawValue,
                        "status": payload.status.rawValue,
                    ],
                    badge: profile.badge, sound: true, threadID: payload.activityID.uuidString.lowercased(), imageURL: nil,
                    eventAt: payload.occurredAt, suppressedReason: nil))
        }
        return drafts
    }
}
