import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

@Suite struct ChatAccessTests {
    /// Group "Crew" of team ops, created by Chidi (a member) with Dana (a member) and Alice
    /// (the team's manager).
    static func crew(_ store: Store) async throws -> (WorkflowFixture, UUID) {
        let acme = try await WorkflowFixture.make(store)
        let group = try await acme.run {
            try await $0.createConversation(
                actor: "chidi@acme.test", with: ["dana@acme.test", "alice@acme.test"], name: "Crew", photoURL: nil, team: "ops")
        }
        return (acme, group.id)
    }

    /// Someone removed from a group, or who left it, sees what was said until then and
    /// nothing after: neither the messages nor an unread count for them.
    @Test func aDepartedParticipantSeesNothingSaidAfterTheyLeft() async throws {
        try await TestDatabase.withStore { store, _ in
            let (acme, group) = try await Self.crew(store)
            _ = try await acme.run {
                try await $0.sendMessage(actor: "alice@acme.test", conversation: group, text: "before", clientID: nil, sentAt: nil)
            }
            _ = try await acme.run {
                try await $0.changeConversation(actor: "chidi@acme.test", conversation: group, .remove(email: "dana@acme.test"))
            }
            _ = try await acme.run { try await $0.changeConversation(actor: "alice@acme.test", conversation: group, .leave) }
            _ = try await acme.run {
                try await $0.sendMessage(actor: "chidi@acme.test", conversation: group, text: "after they went: secret", clientID: nil, sentAt: nil)
            }
            for departed in ["dana@acme.test", "alice@acme.test"] {
                let (conversation, messages) = try await acme.run {
                    try await $0.conversationDetail(viewer: departed, conversation: group, receipts: false)
                }
                #expect(messages.contains { $0.text == "before" })
                #expect(!messages.contains { $0.text.contains("secret") }, "\(departed) read a message sent after leaving")
                #expect(conversation.unread <= 1, "\(departed): \(conversation.unread) unread")
            }
            // The one still in the group sees it all.
            let (_, messages) = try await acme.run {
                try await $0.conversationDetail(viewer: "chidi@acme.test", conversation: group, receipts: false)
            }
            #expect(messages.contains { $0.text.contains("secret") })
        }
    }

    /// After leaving, the conversation is as it was when they left: not its later name,
    /// participants, read positions or presence (it answered with all of them as they are now).
    @Test func aDepartedParticipantSeesTheConversationAsItWasWhenTheyLeft() async throws {
        try await TestDatabase.withStore { store, _ in
            let (acme, group) = try await Self.crew(store)
            let first = try await acme.run {
                try await $0.sendMessage(actor: "alice@acme.test", conversation: group, text: "first", clientID: nil, sentAt: nil)
            }
            _ = try await acme.run { try await $0.changeConversation(actor: "dana@acme.test", conversation: group, .leave) }
            let second = try await acme.run {
                try await $0.sendMessage(actor: "alice@acme.test", conversation: group, text: "second", clientID: nil, sentAt: nil)
            }
            _ = try await acme.run { try await $0.changeConversation(actor: "chidi@acme.test", conversation: group, .rename("Crew after Dana")) }
            _ = try await acme.run { try await $0.changeConversation(actor: "chidi@acme.test", conversation: group, .read) }

            let (seen, messages) = try await acme.run {
                try await $0.conversationDetail(viewer: "dana@acme.test", conversation: group, receipts: true)
            }
            #expect(seen.name == "Crew")
            #expect(seen.participants.map(\.person.email).sorted() == ["alice@acme.test", "chidi@acme.test"])
            let chidi = try #require(seen.participants.first { $0.person.email == "chidi@acme.test" })
            #expect(chidi.lastReadSequence < second.message.sequence, "a read position from after Dana left")
            #expect(seen.participants.allSatisfy { !$0.online && $0.lastSeen == nil && !$0.viewing })
            #expect(messages.contains { $0.id == first.message.id } && !messages.contains { $0.id == second.message.id })
            // The one still in it sees it as it is.
            let (now, _) = try await acme.run {
                try await $0.conversationDetail(viewer: "chidi@acme.test", conversation: group, receipts: false)
            }
            #expect(now.name == "Crew after Dana" && now.participants.count == 2)
            // Back in it (added again), Dana sees it as it is too.
            _ = try await acme.run { try await $0.changeConversation(actor: "chidi@acme.test", conversation: group, .add(email: "dana@acme.test")) }
            let (back, _) = try await acme.run {
                try await $0.conversationDetail(viewer: "dana@acme.test", conversation: group, receipts: false)
            }
            #expect(back.name == "Crew after Dana" && back.participants.count == 3)
        }
    }

    /// Removing others and renaming are for the group's creator, the team's managers and
    /// admins; a plain member may do neither (not even to the creator).
    @Test func onlyTheCreatorAManagerOrAnAdminRemovesOthersOrRenames() async throws {
        try await TestDatabase.withStore { store, _ in
            let (acme, group) = try await Self.crew(store)
            for change in [TenantSession.ConversationChange.remove(email: "chidi@acme.test"), .rename("Dana's now")] {
                let refused = await #expect(throws: StoreError.self) {
                    try await acme.run { try await $0.changeConversation(actor: "dana@acme.test", conversation: group, change) }
                }
                #expect(refused?.code == .forbidden)
            }
            let renamed = try await acme.run { try await $0.changeConversation(actor: "alice@acme.test", conversation: group, .rename("Ops crew")) }
            #expect(renamed.name == "Ops crew")
            let removed = try await acme.run {
                try await $0.changeConversation(actor: "chidi@acme.test", conversation: group, .remove(email: "dana@acme.test"))
            }
            #expect(!removed.participants.contains { $0.person.email == "dana@acme.test" })
        }
    }
}
