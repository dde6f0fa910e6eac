import Foundation
import Testing

/// Chat over HTTP, as a participant sees it.
@Suite struct APIConversationTests {
    @Test func aGroupIsCreatedWrittenInAndChangedByItsParticipantsOnly() async throws {
        try await APIHarness.with { api in
            let chidi = try await api.token("chidi@acme.test")
            let dana = try await api.token("dana@acme.test")
            let erin = try await api.token("erin@acme.test")
            let created = try await api.call(
                "POST", "/v1/conversations", token: chidi, json: ["with": ["dana@acme.test", "alice@acme.test"], "name": "Crew", "team": "ops"])
            #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
            let id = try #require(created.json["id"] as? String).lowercased()
            #expect(created.headers["location"] == "/v1/conversations/\(id)")

            let sent = try await api.call("POST", "/v1/conversations/\(id)/messages", token: chidi, json: ["text": "Hello crew", "clientId": "c-1"])
            #expect(sent.status == 201)
            let replayed = try await api.call(
                "POST", "/v1/conversations/\(id)/messages", token: chidi, json: ["text": "Hello crew", "clientId": "c-1"])
            #expect(replayed.status == 200 && replayed.json["id"] as? String == sent.json["id"] as? String)
            let messages = try await api.call("GET", "/v1/conversations/\(id)/messages", token: dana)
            #expect(messages.status == 200 && messages.items.contains { $0["text"] as? String == "Hello crew" })
            #expect(try await api.call("GET", "/v1/conversations", token: dana).items.count == 1)

            // Paging back: the latest two, then the page before the oldest of them.
            for text in ["two", "three"] {
                #expect(try await api.call("POST", "/v1/conversations/\(id)/messages", token: chidi, json: ["text": text]).status == 201)
            }
            let latest = try await api.call("GET", "/v1/conversations/\(id)/messages?limit=2", token: dana).items
            #expect(latest.compactMap { $0["text"] as? String } == ["two", "three"])
            let oldest = try #require(latest.first?["sequence"] as? Int)
            let earlier = try await api.call("GET", "/v1/conversations/\(id)/messages?limit=2&before=\(oldest)", token: dana).items
            #expect(earlier.last?["text"] as? String == "Hello crew" && earlier.allSatisfy { ($0["sequence"] as? Int ?? .max) < oldest })
            let badPage = try await api.call("GET", "/v1/conversations/\(id)/messages?before=0", token: dana)
            #expect(badPage.status == 422 && (badPage.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "before")

            // Someone outside sees nothing and can write nothing.
            #expect(try await api.call("GET", "/v1/conversations/\(id)", token: erin).status == 404)
            #expect(try await api.call("POST", "/v1/conversations/\(id)/messages", token: erin, json: ["text": "hi"]).status == 404)
            #expect(try await api.call("GET", "/v1/conversations/not-an-id", token: erin).status == 404)

            for (method, path, body): (String, String, [String: Any]?) in [
                ("PUT", "mute", nil), ("DELETE", "mute", nil), ("POST", "read", nil), ("PUT", "viewing", ["seconds": 30])
            ] {
                let reply = try await api.call(method, "/v1/conversations/\(id)/\(path)", token: dana, json: body)
                #expect(reply.status == 200, "\(method) \(path): \(String(decoding: reply.body, as: UTF8.self))")
            }
            #expect(try await api.call("PUT", "/v1/conversations/\(id)/viewing", token: dana, json: ["seconds": 0]).status == 422)
            #expect(try await api.call("POST", "/v1/conversations/\(id)/messages", token: dana, json: ["text": "  "]).status == 422)
            let renamed = try await api.call("PATCH", "/v1/conversations/\(id)", token: chidi, json: ["name": "Ops crew"])
            #expect(renamed.status == 200 && renamed.json["name"] as? String == "Ops crew")
            // Only people of the group's team may join it; Dana goes, comes back, and leaves.
            #expect(try await api.call("PUT", "/v1/conversations/\(id)/participants/erin@acme.test", token: chidi).status == 422)
            #expect(try await api.call("DELETE", "/v1/conversations/\(id)/participants/dana@acme.test", token: chidi).status == 200)
            #expect(try await api.call("POST", "/v1/conversations/\(id)/messages", token: dana, json: ["text": "still here?"]).status == 404)
            #expect(try await api.call("PUT", "/v1/conversations/\(id)/participants/dana@acme.test", token: chidi).status == 200)
            #expect(try await api.call("POST", "/v1/conversations/\(id)/leave", token: dana).status == 200)
            let bad = try await api.call("POST", "/v1/conversations", token: chidi, json: ["with": ["not an email"]])
            #expect(bad.status == 422 && (bad.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "with[0]")
        }
    }

    /// As docs/api.md says: one other person makes a one-to-one, which has no name (a name is
    /// refused, not turned into a group of two); two or more make a group, named or not.
    @Test func aNameMakesNoGroupOfTwo() async throws {
        try await APIHarness.with { api in
            let chidi = try await api.token("chidi@acme.test")
            let named = try await api.call("POST", "/v1/conversations", token: chidi, json: ["with": ["dana@acme.test"], "name": "Us"])
            #expect(named.status == 422 && (named.json["detail"] as? String ?? "").contains("no name"), "\(named.json)")
            let direct = try await api.call("POST", "/v1/conversations", token: chidi, json: ["with": ["dana@acme.test"]])
            #expect(direct.status == 201 && direct.json["kind"] as? String == "direct")
            let group = try await api.call("POST", "/v1/conversations", token: chidi, json: ["with": ["dana@acme.test", "alice@acme.test"]])
            #expect(group.status == 201 && group.json["kind"] as? String == "group")
        }
    }
}
