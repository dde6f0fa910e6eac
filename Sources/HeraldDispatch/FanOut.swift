import Foundation
import HeraldCore
import HeraldStore
import HeraldTemplates

/// Turns claimed events into notifications: who hears (the routing the event's snapshot
/// carries), in which words (the recipient's locale and time zone), with which badge.
struct FanOut: Sendable {
    let templates: TemplateCatalog

    enum Failure: Error, CustomStringConvertible {
        case unreadable(event: UUID, reason: String)

        var description: String {
            switch self {
            case .unreadable(let event, let reason): "event \(event.lowercasedString) cannot be read: \(reason)"
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
    /// or one part of a large event: a part per transaction), decided at `now`, in the words
    /// of the tenant's `templates`.
    func drafts(
        for event: ClaimedEvent, _ payload: Payload, profiles: [DeliveryQueue.Key: RecipientProfile],
        chat: [DeliveryQueue.ParticipantKey: ParticipantState], templates: TenantTemplates, now: Date
    ) throws -> [NotificationDraft] {
        let recipients = payload.recipients[...]
        return switch payload.snapshot {
        case .chat(let payload):
            try chatDrafts(for: event, payload, recipients: recipients, profiles: profiles, chat: chat, templates: templates, now: now)
        case .activity(let payload):
            try activityDrafts(for: event, payload, recipients: recipients, profiles: profiles, templates: templates, now: now)
        }
    }

    /// An activity event's drafts: the recipient's language, time zone and badge.
    func activityDrafts(
        for event: ClaimedEvent, _ payload: ActivityEventPayload, recipients: ArraySlice<EventRecipient>,
        profiles: [DeliveryQueue.Key: RecipientProfile], templates: TenantTemplates, now: Date
    ) throws -> [NotificationDraft] {
        guard let templateEvent = TemplateEvent(payload.event) else { return [] }
        var variables = TemplateVariables.Activity(payload)
        // The same for every recipient: made once, and shared (a dictionary and three UUID
        // strings a recipient otherwise, and every draft's copy hashed again to be written).
        let activity = payload.activityID.lowercasedString
        // What the app needs to offer buttons on the push (docs/apps.md): the version a button
        // acts on (`If-Match`), and per app the category of the buttons its recipient may use.
        let shared = PushPayload.activity(
            payload.event, activityID: payload.activityID, teamID: payload.teamID, priority: payload.priority, status: payload.status,
            version: payload.version)
        let dataByApp = Dictionary(
            uniqueKeysWithValues: AppKind.allCases.map { app in
                (app, shared.offering(NotificationCategory.offered(for: payload.status, on: app)))
            })
        var drafts: [NotificationDraft] = []
        drafts.reserveCapacity(recipients.count)
        for recipient in recipients {
            // A person deleted since the event has no profile: nobody to tell.
            guard let profile = profiles[DeliveryQueue.Key(id: recipient.id, app: recipient.app)] else { continue }
            let template = try templates.template(for: templateEvent, locale: profile.locale)
            // Only a timer's event names its actor as a recipient (an item not opened, overdue).
            variables.forActor = recipient.id == payload.actor.id
            let message = template.render(variables, for: .init(locale: profile.locale, timeZone: profile.timeZone))
            let decided = DeliveryDecision.decide(payload.event, priority: payload.priority, for: profile.recipient, at: now)
            // The badge with this notification counted, when it is an item of their inbox.
            let counted = InboxItem.includes(activity: payload.activityID, isDigest: false, isLiveActivity: false, decision: decided.decision)
            var draft = Self.draft(
                event.id, kind: payload.event, recipient: recipient, teamID: payload.teamID, activityID: payload.activityID,
                conversationID: nil,
                content: NotificationContent(
                    title: message.title, body: message.body, data: dataByApp[recipient.app] ?? shared, badge: profile.badge + (counted ? 1 : 0),
                    sound: decided.sound, threadID: activity),
                eventAt: payload.occurredAt, decided)
            draft.email = EmailReach.of(
                payload.event, forActor: variables.forActor, channel: profile.channels[payload.event] ?? .push, priority: payload.priority)
            if decided.decision == .digest {
                draft.digest = DigestDraft(
                    scopeID: payload.teamID, scopeName: payload.teamName,
                    item: .init(event: payload.event, actor: payload.actor.name, name: payload.activityName), window: profile.digestWindow,
                    timeZone: profile.timeZone)
            }
            drafts.append(draft)
        }
        return drafts
    }

    /// A chat message's drafts: the sender's name (and the group's) as the title, the
    /// 100-character preview as the body; no sound for those who muted the conversation;
    /// suppressed for those who have it open.
    func chatDrafts(
        for event: ClaimedEvent, _ payload: ChatEventPayload, recipients: ArraySlice<EventRecipient>,
        profiles: [DeliveryQueue.Key: RecipientProfile], chat: [DeliveryQueue.ParticipantKey: ParticipantState],
        templates: TenantTemplates, now: Date
    ) throws -> [NotificationDraft] {
        let templateEvent: TemplateEvent = payload.isGroup ? .chatGroup : .chatDirect
        let variables = TemplateVariables.Chat(
            sender: payload.sender.name, group: payload.groupName, isGroup: payload.isGroup, text: payload.text)
        let conversation = payload.conversationID.lowercasedString
        // The same for every recipient: made once, and shared (see `activityDrafts`).
        let data = PushPayload.chatMessage(
            conversationID: payload.conversationID, messageID: payload.messageID, senderID: payload.sender.id, isGroup: payload.isGroup,
            sentAtMilliseconds: payload.sentAtMilliseconds)
        var drafts: [NotificationDraft] = []
        drafts.reserveCapacity(recipients.count)
        var rendered: [String: RenderedMessage] = [:]
        for recipient in recipients {
            guard let profile = profiles[DeliveryQueue.Key(id: recipient.id, app: recipient.app)] else { continue }
            // Someone who left since the message was sent hears nothing of it.
            guard let state = chat[DeliveryQueue.ParticipantKey(conversation: payload.conversationID, person: recipient.id)] else { continue }
            let decided = DeliveryDecision.decide(
                .chatMessage, priority: nil, for: profile.recipient,
                in: DeliveryDecision.Conversation(muted: state.muted, viewing: state.viewing, deferred: state.deferred, mode: state.mode),
                at: now)
            var message: RenderedMessage
            if let count = decided.summarizes {
                // Quiet hours already hold messages of this conversation back for them: this
                // push becomes the one summary of them all (and the earlier ones are cancelled).
                message = try templates.template(for: .chatSummary, locale: profile.locale).render(
                    TemplateVariables.Chat(
                        sender: payload.sender.name, group: payload.groupName, isGroup: payload.isGroup, text: payload.text, count: count))
            } else if let cached = rendered[profile.locale] {
                message = cached
            } else {
                message = try templates.template(for: templateEvent, locale: profile.locale).render(variables)
                rendered[profile.locale] = message
            }
            var draft = Self.draft(
                event.id, kind: .chatMessage, recipient: recipient, teamID: payload.teamID, activityID: nil,
                conversationID: payload.conversationID,
                content: NotificationContent(
                    title: message.title, body: message.body, data: data, badge: profile.badge, sound: decided.sound,
                    threadID: conversation, imageURL: payload.isGroup ? payload.photoURL : nil),
                eventAt: event.occurredAt, decided)
            draft.email = EmailReach.of(.chatMessage, forActor: false, channel: profile.channels[.chatMessage] ?? .push)
            if decided.decision == .digest {
                // A group's digest is titled with its name; a direct chat's with the other person's.
                draft.digest = DigestDraft(
                    scopeID: payload.conversationID,
                    scopeName: payload.groupName.flatMap { $0.isEmpty ? nil : $0 } ?? (payload.isGroup ? "Group chat" : payload.sender.name),
                    item: .init(event: .chatMessage, sender: payload.sender.name, text: TextShortening.preview(payload.text)),
                    window: profile.digestWindow,
                    timeZone: profile.timeZone)
            }
            drafts.append(draft)
        }
        return drafts
    }

    /// A draft as `decided`: suppressed with its reason when nothing is pushed, deferred with
    /// its reason for quiet hours.
    static func draft(
        _ eventID: UUID, kind: EventKind, recipient: EventRecipient, teamID: UUID?, activityID: UUID?, conversationID: UUID?,
        content: NotificationContent, eventAt: Date, _ decided: DeliveryDecision
    ) -> NotificationDraft {
        let suppressed = decided.decision == .viewing || decided.decision == .preferenceOff
        var draft = NotificationDraft(
            eventID: eventID, kind: kind, recipientID: recipient.id, app: recipient.app, teamID: teamID, activityID: activityID,
            conversationID: conversationID, content: content, eventAt: eventAt, suppressedReason: suppressed ? decided.reason : nil)
        draft.decision = decided.decision
        draft.deferredUntil = decided.deferredUntil
        if decided.decision == .quietHours { draft.deferredReason = decided.reason }
        return draft
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
