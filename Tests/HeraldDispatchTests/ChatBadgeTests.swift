import Foundation
import HeraldCore
import HeraldEmulator
import HeraldTestSupport
import HeraldTesting
import Testing

@testable import HeraldStore

/// One badge (docs/inbox.md#one-badge): reading a chat lowers it like reading an item, and the
/// person's devices that show another number hear the new one silently; a device already
/// showing it hears nothing.
@Suite struct ChatBadgeTests {
    /// The badge updates the emulator received after `skipping` messages: token and badge.
    static func updates(_ harness: DispatchHarness, skipping count: Int) async -> [(token: String, badge: String?)] {
        await harness.emulator.messages().dropFirst(count).filter { InboxTests.dataValue("type", in: $0.payload) == "badge" }
            .map { ($0.token, InboxTests.dataValue("badge", in: $0.payload)) }
    }

    @Test func aChatReadSetsTheBadgeOfTheDevicesThatShowAnother() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-pixel", app: .member)
            try await harness.register("chidi@acme.test", token: "chidi-tablet", app: .member)
            let chat = try await harness.store.withTenant(harness.tenant) { session in
                let chat = try await session.createConversation(
                    actor: "alice@acme.test", with: ["chidi@acme.test"], name: nil, photoURL: nil, team: nil)
                _ = try await session.sendMessage(actor: "alice@acme.test", conversation: chat.id, text: "in?", clientID: nil, sentAt: nil)
                return chat
            }
            _ = try await harness.drain()
            var seen = await harness.emulator.messages().count
            #expect(seen == 2, "the message reached both devices, badge 1")

            // Read on one of them: both showed 1, both hear 0.
            _ = try await harness.store.withTenant(harness.tenant) {
                try await $0.changeConversation(actor: "chidi@acme.test", conversation: chat.id, .read)
            }
            _ = try await harness.drain()
            let first = await Self.updates(harness, skipping: seen)
            #expect(first.map(\.token).sorted() == ["chidi-pixel", "chidi-tablet"] && first.allSatisfy { $0.badge == "0" }, "\(first)")
            seen = await harness.emulator.messages().count

            // Watching the chat live, the next message is not pushed: the devices still show 0,
            // and reading it tells them nothing.
            try await harness.store.withTenant(harness.tenant) { session in
                _ = try await session.changeConversation(actor: "chidi@acme.test", conversation: chat.id, .viewing(for: .seconds(60)))
                _ = try await session.sendMessage(actor: "alice@acme.test", conversation: chat.id, text: "ok", clientID: nil, sentAt: nil)
            }
            _ = try await harness.drain()
            _ = try await harness.store.withTenant(harness.tenant) {
                try await $0.changeConversation(actor: "chidi@acme.test", conversation: chat.id, .read)
            }
            _ = try await harness.drain()
            let after = await harness.emulator.messages().dropFirst(seen)
            #expect(after.isEmpty, "\(after.map(\.token))")
            let history = try await harness.history(as: "chidi@acme.test")
            #expect(history.filter { $0.event == "badge" }.count == 1, "one badge update per app, sent to both devices")
        }
    }
}
