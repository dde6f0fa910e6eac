import Foundation
import HeraldCore
import HeraldTemplates
import HeraldTesting
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// Fan-out's drafts of a chat message, with no database: who is told, how, in which words.
struct FanOutDraftTests {
    let tenant = UUID(), conversation = UUID(), team = UUID()
    let bob = UUID(), carol = UUID(), dave = UUID(), erin = UUID(), gone = UUID()

    func profile(_ id: UUID, quietHours: QuietHours? = nil) -> RecipientProfile {
        RecipientProfile(id: id, app: .member, locale: "en", timeZone: "UTC", badge: 3, quietHours: quietHours)
    }

    func drafts(at now: Date) async throws -> [UUID: NotificationDraft] {
        let recipients = [bob, carol, dave, erin, gone].map { EventRecipient(id: $0, app: .member) }
        let payload = ChatEventPayload(
            conversationID: conversation, messageID: UUID(), teamID: team, isGroup: true, groupName: "Family", photoURL: nil,
            sender: PersonReference(id: UUID(), email: "alice@acme.test", name: "Alice Moreau"), text: "Dinner at 8",
            recipients: recipients, sentAt: now)
        let event = ClaimedEvent(
            tenantID: tenant, id: UUID(), kind: EventKind.chatMessage.rawValue, payload: "{}", recipientCount: recipients.count,
            recipients: recipients, occurredAt: now)
        // Bob is in the conversation as usual; Carol has it open; Dave muted it; Erin's quiet
        // hours hold two of its messages back already; `gone` left (no participant state).
        let night = try QuietHours.parse("00:00-23:59", days: nil)
        let profiles = Dictionary(
            uniqueKeysWithValues: [profile(bob), profile(carol), profile(dave), profile(erin, quietHours: night), profile(gone)].map {
                (DeliveryQueue.Key(id: $0.id, app: .member), $0)
            })
        func key(_ id: UUID) -> DeliveryQueue.ParticipantKey { DeliveryQueue.ParticipantKey(conversation: conversation, person: id) }
        let chat = [
            key(bob): ParticipantState(muted: false, viewing: false), key(carol): ParticipantState(muted: false, viewing: true),
            key(dave): ParticipantState(muted: true, viewing: false), key(erin): ParticipantState(muted: false, viewing: false, deferred: 2)
        ]
        let catalog = TemplateCatalog()
        let templates = try await catalog.templates(for: tenant) { _ in [:] }
        let made = try FanOut(templates: catalog).drafts(
            for: event, FanOut.Payload(snapshot: .chat(payload), recipients: recipients), profiles: profiles, chat: chat,
            templates: templates, now: now)
        return Dictionary(uniqueKeysWithValues: made.map { ($0.recipientID, $0) })
    }

    @Test func eachRecipientGetsTheirOwnDecisionAndWords() async throws {
        let drafts = try await drafts(at: try instant("2026-11-23T12:00:00Z"))
        #expect(drafts[gone] == nil, "someone who left hears nothing")
        let bob = try #require(drafts[bob])
        let carol = try #require(drafts[carol])
        let dave = try #require(drafts[dave])
        let erin = try #require(drafts[erin])
        #expect(bob.decision == .send && bob.content.sound && bob.content.badge == 3)
        #expect(bob.content.body.contains("Dinner at 8"))
        #expect(carol.decision == .viewing && carol.suppressedReason == "viewing: the conversation is open on their device")
        #expect(dave.decision == .muted && !dave.content.sound)
        #expect(erin.decision == .quietHours && erin.deferredUntil != nil && erin.deferredReason?.hasPrefix("quiet_hours") == true)
        #expect(erin.content.body != bob.content.body, "the third message held back is a summary of the three")
        #expect(erin.content.body.contains("3"), "\(erin.content.body)")
    }
}
