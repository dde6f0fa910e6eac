import Foundation
import HeraldStore
import HeraldWebhooks
import Testing

/// Which receipts become `message.read` (docs/webhooks.md): what a participant's apps said they
/// read, not what the live channel delivered.
@Suite struct WebhookReceiptEventsTests {
    @Test func aReadIsToldAndTheLiveChannelsDeliveriesAreNot() throws {
        let conversation = UUID()
        let read = try WebhookEvents.events(
            of: .live(.receipt(conversation: conversation, LiveReceipt(person: "dana@acme.test", received: 7, read: 7))))
        #expect(read.map(\.type) == [.messageRead])
        let body = try #require(read.first?.data)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        #expect(object["person"] as? String == "dana@acme.test" && object["read"] as? Int == 7)
        #expect(object["conversationId"] as? String == conversation.uuidString.lowercased())
        // Only received: nothing was read.
        #expect(
            try WebhookEvents.events(of: .live(.receipt(conversation: conversation, LiveReceipt(person: "dana@acme.test", received: 8, read: nil))))
                .isEmpty)
        // A round's deliveries to a group's sockets: received moved, read did not.
        let delivered = (0..<3).map { LiveReceipt(person: "p\($0)@acme.test", received: 9, read: 7) }
        #expect(try WebhookEvents.events(of: .live(.deliveryReceipts(conversation: conversation, delivered))).isEmpty)
    }
}
