import Foundation
import HeraldAPI
import HeraldLive
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// A request is routed once, whatever its headers: only `GET /v1/live` (and the console's
/// `/console/live`) may become a socket, and a refused upgrade's answer is the router's.
/// (The upgrade check used to run the whole router, then run a refused request again.)
@Suite struct APIUpgradeTests {
    static func bearer(_ token: String) -> [String] { ["Authorization: Bearer \(token)"] }

    @Test func aTransitionWithUpgradeHeadersRunsOnce() async throws {
        try await APIHarness.with(.live) { api in
            let alice = try await api.token("alice@acme.test")
            let chidi = try await api.token("chidi@acme.test")
            let created = try await api.call(
                "POST", "/v1/activities", token: alice,
                json: ["team": "ops", "assignee": "chidi@acme.test", "name": "Ship", "deadline": "2026-12-01"])
            let id = try #require(created.json["id"] as? String)
            let raw = try RawHTTP(base: api.base)
            let started = try await raw.exchange(RawHTTP.upgradeRequest("POST", "/v1/activities/\(id)/start", headers: Self.bearer(chidi)))
            // It was 409 "it is running": the first run had started it.
            #expect(started.status == 200, "\(started.status) \(String(decoding: started.body, as: UTF8.self))")
            #expect(started.json["status"] as? String == "running" && started.json["version"] as? Int == 2)
        }
    }

    @Test func aRotationWithUpgradeHeadersRotatesOnce() async throws {
        try await APIHarness.with(.live) { api in
            let key = try await api.key()
            let created = try await api.call(
                "POST", "/v1/webhooks", token: key, json: ["url": "https://hooks.example.com/h", "events": ["activity.*"]])
            let id = try #require(created.json["id"] as? String)
            let original = try #require(created.json["secret"] as? String)
            let raw = try RawHTTP(base: api.base)
            let rotated = try await raw.exchange(RawHTTP.upgradeRequest("POST", "/v1/webhooks/\(id)/rotate-secret", headers: Self.bearer(key)))
            #expect(rotated.status == 200)
            let shown = try #require(rotated.json["secret"] as? String)
            // Rotated twice, the 24 hours' second signature was made with a secret nobody saw.
            let (secret, previous) = try await api.store.withTenant(api.acme) {
                try await $0.connection.query("SELECT secret, previous_secret FROM webhook_endpoints").single().decode((String, String?).self)
            }
            #expect(secret == shown && previous == original)
        }
    }

    @Test func aPostWithABodyAndUpgradeHeadersIsAnswered() async throws {
        try await APIHarness.with(.live) { api in
            let alice = try await api.token("alice@acme.test")
            let conversation = try await api.call("POST", "/v1/conversations", token: alice, json: ["with": ["chidi@acme.test"]])
            let id = try #require(conversation.json["id"] as? String)
            let raw = try RawHTTP(base: api.base)
            // It got no answer at all: NIO failed an upgrade request with a body.
            let posted = try await raw.exchange(
                RawHTTP.upgradeRequest("POST", "/v1/conversations/\(id)/messages", headers: Self.bearer(alice), body: #"{"text":"hello"}"#))
            #expect(posted.status == 201)
            #expect(posted.json["text"] as? String == "hello")
            // So is a GET of the live channel with a body: an ordinary request, which is not a socket.
            let live = try await RawHTTP(base: api.base).exchange(
                RawHTTP.upgradeRequest("GET", "/v1/live", headers: Self.bearer(alice), body: "{}"))
            #expect(live.status == 426)
        }
    }

    @Test func aRefusedUpgradeWithATicketGetsItsOwnAnswer() async throws {
        try await APIHarness.with(.live, live: LiveSettings(perPerson: 1)) { api in
            let chidi = try await api.token("chidi@acme.test")
            func ticket() async throws -> String {
                try #require(try await api.call("POST", "/v1/live/tickets", token: chidi).json["ticket"] as? String)
            }
            // A bad cursor is 422, not the 401 of a ticket the first run had used up.
            let badCursor = try await RawHTTP(base: api.base).exchange(
                RawHTTP.upgradeRequest("GET", "/v1/live?ticket=\(try await ticket())&after=abc"))
            #expect(badCursor.status == 422, "\(String(decoding: badCursor.body, as: UTF8.self))")
            // One socket is Chidi's share here: the next is 429, with a fresh ticket.
            let open = try RawHTTP(base: api.base)
            #expect(try await open.exchange(RawHTTP.upgradeRequest("GET", "/v1/live", headers: Self.bearer(chidi))).status == 101)
            let tooMany = try await RawHTTP(base: api.base).exchange(RawHTTP.upgradeRequest("GET", "/v1/live?ticket=\(try await ticket())"))
            #expect(tooMany.status == 429, "\(String(decoding: tooMany.body, as: UTF8.self))")
            #expect(tooMany.headers["date"] != nil && tooMany.headers["content-type"] == "application/problem+json")
        }
    }

    @Test func anUnauthenticatedUpgradeIsCountedOnce() async throws {
        try await APIHarness.with(.live, limits: RateLimits(anonymousRate: 0.001, anonymousBurst: 3)) { api in
            var statuses: [Int] = []
            for _ in 0..<4 {
                statuses.append(try await RawHTTP(base: api.base).exchange(RawHTTP.upgradeRequest("GET", "/v1/live")).status)
            }
            // Counted twice, the second was 429.
            #expect(statuses == [401, 401, 401, 429])
        }
    }

    /// `device=` names a phone of the caller's that pushes go to: not one logged out, nor a
    /// Live Activity's update token (both were accepted).
    @Test func aSocketSpeaksOnlyForARegisteredAlertDevice() async throws {
        try await APIHarness.with(.live) { api in
            let alice = try await api.token("alice@acme.test")
            let chidi = try await api.token("chidi@acme.test")
            let phone = "c41d1ab1e70000000000000000000000000000000000000000000000000000b2"
            let update = "0ddba11000000000000000000000000000000000000000000000000000000001"
            #expect(
                try await api.call(
                    "POST", "/v1/devices", token: chidi, json: ["token": phone, "app": "member", "platform": "ios", "provider": "apns"]
                )
                .status == 201)
            let created = try await api.call(
                "POST", "/v1/activities", token: alice,
                json: ["team": "ops", "assignee": "chidi@acme.test", "name": "Ship", "deadline": "2026-12-01", "priority": "p0"])
            let activity = try #require(created.json["id"] as? String)
            let uploaded = try await api.call("PUT", "/v1/activities/\(activity)/live-activity", token: chidi, json: ["token": update])
            #expect((200..<300).contains(uploaded.status), "\(uploaded.status)")
            func upgrade(_ device: String) async throws -> Int {
                try await RawHTTP(base: api.base).exchange(RawHTTP.upgradeRequest("GET", "/v1/live?device=\(device)", headers: Self.bearer(chidi)))
                    .status
            }
            #expect(try await upgrade(phone) == 101)
            #expect(try await upgrade(update) == 422)
            #expect(try await api.call("DELETE", "/v1/devices/\(phone)", token: chidi).status == 204)
            #expect(try await upgrade(phone) == 422)
        }
    }
}
