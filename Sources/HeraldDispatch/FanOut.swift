import Foundation
import HeraldStore
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

    /// An event's snapshot, read once per fan-out.
    struct Payload: Sendable {
        enum Snapshot: Sendable {
            case activity(ActivityEventPayload)
            case chat(ChatEventPayload)

            /// The conversation a chat event belongs to.
            var conversation: UUID? {
                if case .chat(let payload) = self { payload.conversationID } else { nil }
            }
        }

        let snapshot: Snapshot
        /// Who the event names (routing was decided when it happened).
        let recipients: [EventRecipient]

        /// The conversation a chat event belongs to.
        var conversation: UUID? { snapshot.conversation }
    }

    /// The snapshot of an event and all its recipients (an event of up to a part of them).
    static func payload(of event: ClaimedEvent, decoder: JSONDecoder) throws -> Payload {
        let snapshot = try snapshot(of: event, decoder: decoder)
        guard let recipients = event.recipients else { throw Failure.unreadable(event: event.id, reason: unreadableRecipients) }
        return Payload(snapshot: snapshot, recipients: recipients)
    }

    static let unreadableRecipients = "its recipients are not a list of ids and apps"

    /// The snapshot of an event, without its recipients.
    static func snapshot(of event: ClaimedEvent, decoder: JSONDecoder) throws -> Payload.Snapshot {
        do {
            guard event.recipientCount != nil else { throw Failure.unreadable(event: event.id, reason: unreadableRecipients) }
            let data = Data(event.payload.utf8)
            if event.kind == EventKind.chatMessage.rawValue {
                return .chat(try decoder.decode(ChatEventPayload.self, from: data))
            }
            let payload = try decoder.decode(ActivityEventPayload.self, from: data)
            guard TemplateEvent(payload.event) != nil else {
                throw Failure.unreadable(event: event.id, reason: "\(payload.event.rawValue) is not an activity event")
            }
            return .activity(payload)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure.unreadable(event: event.id, reason: "\(error)")
        }
    }

    /// The notification drafts of one event for the recipients in `payload` (all of them,
    /// or one part of a large event: a part per transaction).
    func drafts(
        for event: ClaimedEvent, _ payload: Payload, profiles: [DeliveryQueue.Key: RecipientProfile],
        chat: [DeliveryQueue.ParticipantKey: ParticipantState]
    ) async throws -> [NotificationDraft] {
        let recipients = payload.recipients[...]
        return switch payload.snapshot {
        case .chat(let payload): try await chatDrafts(for: event, payload, recipients: recipients, profiles: profiles, chat: chat)
        case .activity(let payload): try await activityDrafts(for: event, payload, recipients: recipients, profiles: profiles)
        }
    }

    /// An activity event's drafts: the recipient's language, time zone and badge.
    func activityDrafts(
        for event: ClaimedEvent, _ payload: ActivityEventPayload, recipients: ArraySlice<EventRecipient>,
        profiles: [DeliveryQueue.Key: RecipientProfile]
    ) async throws -> [NotificationDraft] {
        guard let templateEvent = TemplateEvent(payload.event) else { return [] }
        let variables = TemplateVariables.Activity(payload)
        let now = Date()
        // The same for every recipient: made once, and shared (a dictionary and three UUID
        // strings a recipient otherwise, and every draft's copy hashed again to be written).
        let activity = payload.activityID.uuidString.lowercased()
        let data = [
            "type": payload.event.payloadType, "activityId": activity, "teamId": payload.teamID.uuidString.lowercased(),
            "priority": payload.priority.rawValue, "status": payload.status.rawValue,
        ]
        var drafts: [NotificationDraft] = []
        drafts.reserveCapacity(recipients.count)
        for recipient in recipients {
            // A person deleted since the event has no profile: nobody to tell.
            guard let profile = profiles[DeliveryQueue.Key(id: recipient.id, app: recipient.app)] else { continue }
            let template = try await templates.template(for: templateEvent, locale: profile.locale, tenant: event.tenantID)
            let message = template.render(variables, for: .init(locale: profile.locale, timeZone: profile.timeZone))
            let (decision, deferredUntil, why) = profile.decide(payload.event, priority: payload.priority, now: now)
            var draft =
                NotificationDraft(
                    eventID: event.id, kind: payload.event, recipientID: recipient.id, app: recipient.app, teamID: payload.teamID,
                    activityID: payload.activityID, conversationID: nil,
                    content: NotificationContent(
                        title: message.title, body: message.body, data: data, badge: profile.badge, sound: true, threadID: activity),
                    eventAt: payload.occurredAt, suppressedReason: decision == .preferenceOff ? why : nil)
            draft.decision = decision
            draft.deferredUntil = deferredUntil
            if decision == .quietHours { draft.deferredReason = why }
            drafts.append(draft)
        }
        return drafts
    }

    /// A chat message's drafts: the sender's name (and the group's) as the title, the
    /// 100-character preview as the body; no sound for those who muted the conversation;
    /// suppressed for those who have it open.
    func chatDrafts(
        for event: ClaimedEvent, _ payload: ChatEventPayload, recipients: ArraySlice<EventRecipient>,
        profiles: [DeliveryQueue.Key: RecipientProfile], chat: [DeliveryQueue.ParticipantKey: ParticipantState]
    ) async throws -> [NotificationDraft] {
        let templateEvent: TemplateEvent = payload.isGroup ? .chatGroup : .chatDirect
        let variables = TemplateVariables.Chat(
            sender: payload.sender.name, group: payload.groupName, isGroup: payload.isGroup, text: payload.text)
        let conversation = payload.conversationID.uuidString.lowercased()
        // The same for every recipient: made once, and shared (see `activityDrafts`).
        let data = [
            "type": EventKind.chatMessage.payloadType, "conversationID": conversation,
            "messageID": payload.messageID.uuidString.lowercased(), "senderID": payload.sender.id.uuidString.lowercased(),
            "isGroup": payload.isGroup ? "true" : "false", "timestamp": String(payload.sentAtMilliseconds),
        ]
        var drafts: [NotificationDraft] = []
        drafts.reserveCapacity(recipients.count)
        var rendered: [String: RenderedMessage] = [:]
        let now = Date()
        for recipient in recipients {
            guard let profile = profiles[DeliveryQueue.Key(id: recipient.id, app: recipient.app)] else { continue }
            let state = chat[DeliveryQueue.ParticipantKey(conversation: payload.conversationID, person: recipient.id)]
            // Someone who left since the message was sent hears nothing of it.
            guard let state else { continue }
            var message: RenderedMessage
            if let cached = rendered[profile.locale] {
                message = cached
            } else {
                let template = try await templates.template(for: templateEvent, locale: profile.locale, tenant: event.tenantID)
                message = template.render(variables)
                rendered[profile.locale] = message
            }
            // Viewing first (nothing to push at all), then their preference, quiet hours, mute.
            var (decision, deferredUntil, why) = profile.decide(.chatMessage, priority: nil, now: now)
            if state.viewing {
                (decision, deferredUntil, why) = (.viewing, nil, "viewing: the conversation is open on their device")
            } else if decision == .send, state.muted {
                decision = .muted
            }
            // Quiet hours already hold messages of this conversation back for them: this push
            // becomes the one summary of them all (and the earlier ones are cancelled).
            if decision == .quietHours, state.deferred > 0 {
                let template = try await templates.template(for: .chatSummary, locale: profile.locale, tenant: event.tenantID)
                message = template.render(
                    TemplateVariables.Chat(
                        sender: payload.sender.name, group: payload.groupName, isGroup: payload.isGroup, text: payload.text,
                        count: state.deferred + 1))
            }
            var draft =
                NotificationDraft(
                    eventID: event.id, kind: .chatMessage, recipientID: recipient.id, app: recipient.app, teamID: payload.teamID,
                    activityID: nil, conversationID: payload.conversationID,
                    content: NotificationContent(
                        title: message.title, body: message.body, data: data,
                        badge: profile.badge, sound: !state.muted, threadID: conversation, imageURL: payload.isGroup ? payload.photoURL : nil),
                    eventAt: event.occurredAt, suppressedReason: decision == .viewing || decision == .preferenceOff ? why : nil)
            draft.decision = decision
            draft.deferredUntil = deferredUntil
            if decision == .quietHours { draft.deferredReason = why }
            drafts.append(draft)
        }
        return drafts
    }
}

extension FanOut {
    /// Of the chat pushes quiet hours defer for one person in one conversation within one
    /// batch, only the last goes out (it counts them all); the others are recorded as
    /// summarized into it, with no delivery.
    static func summarize(_ drafts: inout [NotificationDraft]) {
        var last: [DeliveryQueue.ParticipantKey: Int] = [:]
        for (index, draft) in drafts.enumerated() where draft.decision == .quietHours && draft.suppressedReason == nil {
            guard let conversation = draft.conversationID else { continue }
            let key = DeliveryQueue.ParticipantKey(conversation: conversation, person: draft.recipientID)
            if let earlier = last[key] { drafts[earlier].summarizedLater = true }
            last[key] = index
        }
    }
}
