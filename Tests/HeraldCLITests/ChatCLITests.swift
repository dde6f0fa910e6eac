import Foundation
import HeraldEmulator
import HeraldTestSupport
import HeraldTesting
import Testing

extension DispatchCLITests {
    /// Chat (docs/concepts.md), end to end: routing, titles, previews, system messages, mute,
    /// presence, offline-queue idempotency, direct titles and badges.
    @Test func aFamilyGroupChat() async throws {
        try await withSetup { cli, _, emulator in
            var family = CLIFixture(teams: [("family", "Family")])
            for (email, name, role) in [
                ("alice@acme.test", "Alice Moreau", "manager"), ("bob@acme.test", "Bob Stone", "member"),
                ("carol@acme.test", "Carol Wu", "member"), ("dave@acme.test", "Dave Ng", "member")
            ] {
                family = family.adding(email, name: name, team: "family", role: role)
                    .adding(device: "\(email.prefix { $0 != "@" })-phone-token", of: email, app: role == "manager" ? "manager" : "member")
            }
            try await make(family, with: cli)
            let group = try await ok(
                cli,
                [
                    "chat", "create", "--with", "bob@acme.test,carol@acme.test", "--name", "Family Group",
                    "--photo", "https://example.com/family.png", "--as", "alice@acme.test"
                ])
            try await ok(cli, ["chat", "add", group, "dave@acme.test", "--as", "alice@acme.test"])
            try await ok(cli, ["dispatch", "--drain"])
            #expect(await emulator.messages().isEmpty, "creating a group and adding someone notify nobody")

            // A long message: everyone but Alice, titled with the group, cut to 100 + "...".
            let long = String(repeating: "Grandma's 90th 🎂 ", count: 12)
            try await ok(cli, ["chat", "send", group, "--text", long, "--as", "alice@acme.test"])
            try await ok(cli, ["dispatch", "--drain"])
            var messages = await emulator.messages()
            #expect(Set(messages.map(\.token)) == ["bob-phone-token", "carol-phone-token", "dave-phone-token"])
            #expect(messages.allSatisfy { $0.title == "Alice Moreau in Family Group" })
            #expect(messages.allSatisfy { $0.body == String(long.prefix(100)) + "..." })
            let fcm = try Self.message(messages[0])
            let data = try #require(fcm["data"] as? [String: String])
            #expect(data["type"] == "new_message" && data["conversationID"] == group && data["isGroup"] == "true")
            #expect(data["messageID"] != nil && data["senderID"] != nil && Int(data["timestamp"] ?? "") != nil)
            #expect((fcm["notification"] as? [String: Any])?["image"] as? String == "https://example.com/family.png")
            let aps = try Self.aps(fcm)
            #expect(aps["thread-id"] as? String == group && aps["mutable-content"] as? Int == 1 && aps["sound"] as? String == "default")
            #expect(aps["badge"] as? Int == 1)

            // Bob mutes, Carol has the conversation open: Bob gets no sound, Carol no push.
            await emulator.clearMessages()
            try await ok(cli, ["chat", "mute", group, "--as", "bob@acme.test"])
            try await ok(cli, ["chat", "viewing", group, "--for", "2m", "--as", "carol@acme.test"])
            for _ in 0..<3 {
                try await ok(cli, ["chat", "send", group, "--text", "Dinner at 7?", "--client-id", "offline-1", "--as", "alice@acme.test"])
            }
            try await ok(cli, ["dispatch", "--drain"])
            messages = await emulator.messages()
            #expect(messages.map(\.token).sorted() == ["bob-phone-token", "dave-phone-token"])
            let bobMessage = try #require(messages.first { $0.token == "bob-phone-token" })
            let daveMessage = try #require(messages.first { $0.token == "dave-phone-token" })
            let bob = try Self.aps(try Self.message(bobMessage))
            let dave = try Self.aps(try Self.message(daveMessage))
            #expect(bob["sound"] == nil && dave["sound"] as? String == "default")
            #expect(bob["badge"] as? Int == 2)
            let suppressed = try await ok(cli, ["history", "--as", "alice@acme.test", "--status", "suppressed", "--json"])
            let entries = try #require(try JSONSerialization.jsonObject(with: Data(suppressed.utf8)) as? [[String: Any]])
            #expect(entries.count == 1)
            #expect((entries.first?["reason"] as? String)?.hasPrefix("viewing") == true)
            let shown = try await ok(cli, ["chat", "show", group, "--as", "alice@acme.test", "--json"])
            #expect(shown.components(separatedBy: "Dinner at 7?").count == 2, "one message for three sends with one client id")

            // Reading lowers the badge; a direct message is titled with the sender alone.
            await emulator.clearMessages()
            try await ok(cli, ["chat", "read", group, "--as", "bob@acme.test"])
            let direct = try await ok(cli, ["chat", "create", "--with", "bob@acme.test", "--as", "dave@acme.test"])
            let psst = try await ok(cli, ["chat", "send", direct, "--text", "psst", "--as", "dave@acme.test"])
            try await ok(cli, ["dispatch", "--drain"])
            // Content and trace (docs/notifications.md#content-and-trace): Alice manages the
            // family and Ada is an admin; neither is in Dave and Bob's conversation. They see that
            // the message reached Bob's phone, never what it said: in the list, in one
            // notification, and (Ada, who may trace any message) in why.
            try await ok(cli, ["user", "add", "ada@acme.test", "--name", "Ada Admin", "--admin"])
            let trace = try await ok(cli, ["history", "--conversation", direct, "--as", "alice@acme.test", "--json"])
            let traced = try #require(try JSONSerialization.jsonObject(with: Data(trace.utf8)) as? [[String: Any]])
            #expect(traced.count == 1 && (traced.first?["recipient"] as? [String: Any])?["email"] as? String == "bob@acme.test", "\(trace)")
            #expect(traced.first?["status"] as? String == "sent" && traced.first?["wordsWithheld"] as? Bool == true)
            #expect(traced.first?["body"] as? String == "a message in a conversation you are not in")
            let notification = try #require(traced.first?["id"] as? String)
            let shownToAlice = try await ok(cli, ["history", "show", notification, "--as", "alice@acme.test", "--json"])
            let shownToAda = try await ok(cli, ["history", "show", notification, "--as", "ada@acme.test", "--json"])
            let whyToAda = try await ok(cli, ["why", "--message", psst, "--as", "ada@acme.test", "--json"])
            #expect(![trace, shownToAlice, shownToAda, whyToAda].contains { $0.contains("psst") })
            #expect(shownToAda.contains("a message in a conversation you are not in"))
            #expect(whyToAda.contains("bob@acme.test") && whyToAda.contains("bob-phone-token".prefix(6)), "the trace is whole: \(whyToAda)")
            #expect(try await ok(cli, ["history", "show", notification, "--as", "bob@acme.test", "--json"]).contains("psst"))
            messages = await emulator.messages()
            #expect(messages.map(\.token) == ["bob-phone-token"])
            #expect(messages.first?.title == "Dave Ng" && messages.first?.body == "psst")
            let directMessage = try Self.message(try #require(messages.first))
            #expect(try Self.aps(directMessage)["badge"] as? Int == 1)
            let directData = try #require(directMessage["data"] as? [String: String])
            #expect(directData["isGroup"] == "false")

            // Receipts: who got the push, who read it.
            let receipts = try await ok(cli, ["chat", "show", group, "--receipts", "--as", "alice@acme.test", "--json"])
            let detail = try #require(try JSONSerialization.jsonObject(with: Data(receipts.utf8)) as? [String: Any])
            let stored = try #require(detail["messages"] as? [[String: Any]])
            let dinner = try #require(stored.first { $0["text"] as? String == "Dinner at 7?" })
            #expect(dinner["deliveredTo"] as? [String] == ["bob@acme.test", "dave@acme.test"])
            #expect(dinner["readBy"] as? [String] == ["bob@acme.test"])

            // Outsiders and bad input.
            let outsider = try await cli.run(["chat", "send", direct, "--text", "hi", "--as", "alice@acme.test"])
            #expect(outsider.status != 0 && outsider.stderr.hasPrefix("herald: no conversation"))
            let future = try await cli.run(["chat", "send", group, "--text", "hi", "--sent-at", "yesterday", "--as", "alice@acme.test"])
            #expect(future.status != 0 && future.stderr.split(separator: "\n").count == 1)
            let impossible = try await cli.run(["chat", "send", group, "--text", "hi", "--sent-at", "2026-02-30T00:00:00Z", "--as", "alice@acme.test"]
            )
            #expect(impossible.status != 0 && impossible.stderr.contains("is not an ISO 8601 time"), "\(impossible.stderr)")
        }
    }

    static func message(_ recorded: RecordedMessage) throws -> [String: Any] {
        let payload = try #require(try JSONSerialization.jsonObject(with: Data(recorded.payload.utf8)) as? [String: Any])
        return try #require(payload["message"] as? [String: Any])
    }

    static func aps(_ message: [String: Any]) throws -> [String: Any] {
        try #require(((message["apns"] as? [String: Any])?["payload"] as? [String: Any])?["aps"] as? [String: Any])
    }
}
