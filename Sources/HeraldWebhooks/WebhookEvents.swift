import Foundation
import HeraldCore
import HeraldStore

/// What the tenant's endpoints are told of each row of the durable feed (docs/webhooks.md), and
/// which endpoints: a pure decision, asked by the feeder (`Store.feedWebhooks`) inside its
/// transaction.
///
/// Each event's body is `{"data", "timestamp", "type"}`; `data` holds the API's objects:
/// - `activity.*`: `{"activity": Activity}`, the activity after the event;
/// - `message.created`: `{"conversationId", "message": Message}`;
/// - `message.read`: `{"conversationId", "person", "read"}` (the highest sequence read);
/// - `conversation.updated`: `{"conversationId"}`;
/// - `notification.*` and `device.deactivated`: the objects the dispatcher wrote;
/// - `notification.seen`, `.read`, `.opened`, `.interacted`, `.archived`: `{"notificationId",
///   "recipientId", "event", "app", "activityId", "conversationId", "at", "deviceId", "action"}`.
public enum WebhookEvents {
    /// One event: its type and its `data` as JSON.
    public struct Event: Sendable, Equatable {
        public let type: WebhookEventType
        public let data: String
    }

    /// The messages for `rows`: each event once, with a new id, for each endpoint of its tenant
    /// whose patterns match it and that existed when it happened.
    public static func drafts(_ rows: [WebhookFeedRow], _ subscriptions: [WebhookSubscription]) throws -> [WebhookMessageDraft] {
        let byTenant = Dictionary(grouping: subscriptions, by: \.tenantID)
        var filters: [UUID: WebhookEventFilter] = [:]
        for subscription in subscriptions {
            // Patterns were checked when written; one that no longer parses matches nothing.
            filters[subscription.endpointID] = try? WebhookEventFilter(subscription.patterns)
        }
        var drafts: [WebhookMessageDraft] = []
        for row in rows {
            for event in try events(of: row.payload) {
                let endpoints = (byTenant[row.tenantID] ?? []).filter { subscription in
                    subscription.createdAt <= row.createdAt && filters[subscription.endpointID]?.matches(event.type) == true
                }.map(\.endpointID)
                guard !endpoints.isEmpty else { continue }
                drafts.append(
                    WebhookMessageDraft(
                        tenantID: row.tenantID, id: UUID.v7(at: row.createdAt), type: event.type.rawValue,
                        body: body(event, at: row.createdAt), createdAt: row.createdAt, endpoints: endpoints))
            }
        }
        return drafts
    }

    /// The events a feed row reports (none for a live banner: `notification.*` tell of it).
    public static func events(of payload: WebhookFeedRow.Payload) throws -> [Event] {
        func json(_ value: some Encodable) throws -> String { try HeraldJSONEncoder().string(value) }
        switch payload {
        case .live(.activity(let change)):
            return [Event(type: WebhookEventType(change.event), data: try json(["activity": change.activity]))]
        case .live(.message(let conversation, let message)):
            return [Event(type: .messageCreated, data: try json(MessageData(conversationID: conversation, message: message)))]
        case .live(.receipt(let conversation, let receipt)):
            guard let read = receipt.read else { return [] }
            return [Event(type: .messageRead, data: try json(ReadData(conversationID: conversation, person: receipt.person, read: read)))]
        case .live(.deliveryReceipts):
            // The live channel's deliveries move what was received, never what was read.
            return []
        case .live(.conversation(let conversation)):
            return [Event(type: .conversationUpdated, data: try json(["conversationId": conversation]))]
        case .live(.notification):
            return []
        case .live(.inboxStatus(let change)):
            return try change.happened.flatMap { item in
                try item.events.filter(InboxEngagement.Event.told.contains).map { event in
                    Event(
                        type: .notificationEngaged(event),
                        data: try json(
                            EngagementData(
                                notificationID: item.notificationID, recipientID: change.recipientID, event: item.event, app: item.app,
                                activityID: item.activityID, conversationID: item.conversationID, at: change.at, deviceID: change.device,
                                action: event == .interacted ? change.action : nil)))
                }
            }
        case .event(let type, let data):
            guard let type = WebhookEventType(rawValue: type) else { return [] }
            return [Event(type: type, data: data)]
        }
    }

    /// The request body: `{"data":…,"timestamp":…,"type":…}`.
    public static func body(_ event: Event, at instant: Date) -> String {
        var writer = JSONWriter(capacity: event.data.utf8.count + 96)
        writer.raw("{\"data\":")
        writer.json(event.data)
        writer.raw(",\"timestamp\":")
        writer.date(instant)
        writer.raw(",\"type\":")
        writer.string(event.type.rawValue)
        writer.raw("}")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    private struct MessageData: Encodable {
        let conversationID: UUID
        let message: MessageRecord
        enum CodingKeys: String, CodingKey {
            case conversationID = "conversationId"
            case message
        }
    }

    /// `notification.seen`, …: which notification, whose, and when, from which device.
    private struct EngagementData: Encodable {
        let notificationID: UUID
        let recipientID: UUID
        let event: String
        let app: AppKind
        let activityID: UUID?
        let conversationID: UUID?
        let at: Date
        let deviceID: UUID?
        let action: String?
        enum CodingKeys: String, CodingKey {
            case notificationID = "notificationId"
            case recipientID = "recipientId"
            case activityID = "activityId"
            case conversationID = "conversationId"
            case deviceID = "deviceId"
            case event, app, at, action
        }
    }

    private struct ReadData: Encodable {
        let conversationID: UUID
        let person: String
        let read: Int64
        enum CodingKeys: String, CodingKey {
            case conversationID = "conversationId"
            case person, read
        }
    }
}
