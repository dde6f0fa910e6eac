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
    static func recipients(of event: ClaimedEvent) throws -> [EventRecipient] {
        event.kind == EventKind.chatMessage.rawValue ? try chatPayload(event).recipients : try activityPayload(event).recipients
    }

    /// The conversation a chat event belongs to.
    static func conversation(of event: ClaimedEvent) -> UUID? {
        guard event.kind == EventKind.chatMessage.rawValue else { return nil }
        return try? chatPayload(event).conversationID
    }

    static func chatPayload(_ event: ClaimedEvent) throws -> ChatEventPayload {
        do {
            return try JSONDecoder().decode(ChatEventPayload.self, from: Data(event.payload.utf8))
        } catch {
            throw Failure.unreadable(event: event.id, reason: "\(error)")
        }
    }

    static func activityPayload(_ event: ClaimedEvent) throws -> ActivityEventPayload {
        do {
            return try JSONDecoder().decode(ActivityEventPayload.self, from: Data(event.payload.utf8))
        } catch {
            throw Failure.unreadable(event: event.id, reason: "\(error)")
        }
    }

    /// The notification drafts of one event.
    func drafts(
        for event: ClaimedEvent, profiles: [DeliveryQueue.Key: RecipientProfile], chat: [DeliveryQueue.ParticipantKey: ParticipantState]
    ) async throws -> [NotificationDraft] {
        if event.kind == EventKind.chatMessage.rawValue {
            return try await chatDrafts(for: event, profiles: profiles, chat: chat)
        }
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

    /// A chat message's drafts: the sender's name (and the group's) as the title, the
    /// 100-character preview as the body; no sound for those who muted the conversation;
    /// suppressed for those who have it open.
    func chatDrafts(
        for event: ClaimedEvent, profiles: [DeliveryQueue.Key: RecipientProfile], chat: [DeliveryQueue.ParticipantKey: ParticipantState]
    ) async throws -> [NotificationDraft] {
        let payload = try Self.chatPayload(event)
        let templateEvent: TemplateEvent = payload.isGroup ? .chatGroup : .chatDirect
        let variables = TemplateVariables.Chat(
            sender: payload.sender.name, group: payload.groupName, isGroup: payload.isGroup, text: payload.text)
        let conversation = payload.conversationID.uuidString.lowercased()
        var drafts: [NotificationDraft] = []
        drafts.reserveCapacity(payload.recipients.count)
        var rendered: [String: RenderedMessage] = [:]
        for recipient in payload.recipients {
            guard let profile = profiles[DeliveryQueue.Key(id: recipient.id, app: recipient.app)] else { continue }
            let state = chat[DeliveryQueue.ParticipantKey(conversation: payload.conversationID, person: recipient.id)]
            // Someone who left since the message was sent hears nothing of it.
            guard let state else { continue }
            let message: RenderedMessage
            if let cached = rendered[profile.locale] {
                message = cached
            } else {
                let template = try await templates.template(for: templateEvent, locale: profile.locale, tenant: event.tenantID)
                message = template.render(variables)
                rendered[profile.locale] = message
            }
            drafts.append(
                NotificationDraft(
                    eventID: event.id, kind: .chatMessage, recipientID: recipient.id, app: recipient.app, teamID: payload.teamID,
                    activityID: nil, conversationID: payload.conversationID, title: message.title, body: message.body,
                    data: [
                        "type": EventKind.chatMessage.payloadType, "conversationID": conversation,
                        "messageID": payload.messageID.uuidString.lowercased(), "senderID": payload.sender.id.uuidString.lowercased(),
                        "isGroup": payload.isGroup ? "true" : "false", "timestamp": String(payload.sentAtMilliseconds),
                    ],
                    badge: profile.badge, sound: !state.muted, threadID: conversation, imageURL: payload.isGroup ? payload.photoURL : nil,
                    eventAt: event.occurredAt, suppressedReason: state.viewing ? "viewing: the conversation is open on their device" : nil))
        }
        return drafts
    }
}

/// A participant's state at fan-out time.
struct ParticipantState: Sendable {
    let muted: Bool
    let viewing: Bool
}
