import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

@testable import HeraldAPI
@testable import HeraldLive
@testable import HeraldWebhooks

/// Every id Herald writes is a UUID in lower case (RFC 9562), whichever way it leaves: the
/// API's answers, a live frame, a webhook body; either case is accepted on the way in. (The
/// API wrote Swift's upper case while pushes, webhooks and the CLI wrote lower case: a client
/// comparing a push's activity id with the API's found no match.)
@Suite struct IdSpellingTests {
    /// Every string in `json` that is a UUID in any case.
    static func uuids(in json: Any) -> [String] {
        switch json {
        case let text as String: UUID(uuidString: text) != nil ? [text] : []
        case let array as [Any]: array.flatMap(uuids(in:))
        case let object as [String: Any]: object.values.flatMap(uuids(in:))
        default: []
        }
    }

    static func expectLowerCase(_ body: [UInt8], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
        let json = try JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
        let ids = uuids(in: json)
        #expect(!ids.isEmpty, "\(what) carries no id", sourceLocation: sourceLocation)
        #expect(ids.allSatisfy { $0 == $0.lowercased() }, "\(what): \(ids)", sourceLocation: sourceLocation)
        return ids
    }

    @Test func theAPIsAnswersFramesAndWebhookBodiesWriteIdsInLowerCase() async throws {
        try await APIHarness.with { api in
            let alice = try await api.token("alice@acme.test")
            let chidi = try await api.token("chidi@acme.test")
            let key = try await api.key()
            let created = try await api.call(
                "POST", "/v1/activities", token: alice,
                json: ["team": "ops", "assignee": "chidi@acme.test", "name": "Ship", "deadline": "2026-12-01"])
            #expect(created.status == 201)
            let activity = try #require(created.json["id"] as? String)
            let conversation = try await api.call("POST", "/v1/conversations", token: alice, json: ["with": ["chidi@acme.test"]])
            let conversationID = try #require(conversation.json["id"] as? String)
            let message = try await api.call("POST", "/v1/conversations/\(conversationID)/messages", token: alice, json: ["text": "hi"])
            _ = try await api.call(
                "POST", "/v1/webhooks", token: key, json: ["url": "https://hooks.example.com/herald", "events": ["activity.*"]])
            _ = try await api.call("POST", "/v1/devices", token: chidi, json: ["token": "chidi-pixel", "app": "member", "platform": "android"])
            for (what, reply) in [
                ("POST /v1/activities", created), ("POST /v1/conversations", conversation), ("POST …/messages", message),
                ("GET /v1/me", try await api.call("GET", "/v1/me", token: chidi)),
                ("GET /v1/activities", try await api.call("GET", "/v1/activities", token: chidi)),
                ("GET /v1/conversations", try await api.call("GET", "/v1/conversations", token: chidi)),
                ("GET …/messages", try await api.call("GET", "/v1/conversations/\(conversationID)/messages", token: chidi)),
                ("GET /v1/devices", try await api.call("GET", "/v1/devices", token: chidi)),
                ("GET /v1/webhooks", try await api.call("GET", "/v1/webhooks", token: key)),
                ("GET /v1/people", try await api.call("GET", "/v1/people", token: key))
            ] {
                #expect((200..<300).contains(reply.status), "\(what): \(reply.status)")
                _ = try Self.expectLowerCase(reply.body, what)
            }
            // Upper case on the way in is the same id.
            let upper = try await api.call("GET", "/v1/activities/\(activity.uppercased())", token: chidi)
            #expect(upper.status == 200 && upper.json["id"] as? String == activity)

            // A live frame and a webhook body, from the records the API answered with.
            let record = try await api.store.withTenant(api.acme) { try await $0.activity(id: try #require(UUID(uuidString: activity))) }
            let frame = LiveFrame.text(LiveFrame.Activity(cursor: LiveFrame.cursor(1), event: .activityAssigned, activity: record))
            #expect(try Self.expectLowerCase(Array(frame.utf8), "activity frame").contains(activity))
            let events = try WebhookEvents.events(of: .live(.activity(LiveActivityChange(event: .activityAssigned, activity: record))))
            let body = try #require(events.first?.data)
            #expect(try Self.expectLowerCase(Array(body.utf8), "webhook body").contains(activity))
        }
    }
}
