import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// Each resource whose rule the store now asks (`AccessPolicy`): a member, a manager, an admin
/// and another tenant's key get what the policy says, and what is not theirs answers exactly as
/// what does not exist.
@Suite struct AccessMatrixTests {
    struct Callers {
        let member: String  // Dana, a member of ops
        let manager: String  // Alice, ops' manager
        let admin: String  // Ada, an admin of acme
        let rival: String  // a tenant key of globex, acting as itself
    }

    static func callers(_ api: APIHarness) async throws -> Callers {
        let rival = try await api.store.withTenant(api.globex) { try await $0.createTenantKey(name: "rival", lifetime: nil, by: "test").secret }
        return Callers(
            member: try await api.token("dana@acme.test"), manager: try await api.token("alice@acme.test"),
            admin: try await api.token("root@acme.test"), rival: rival)
    }

    /// Not yours answers as missing: the same status and the same title.
    static func expectSameAnswer(
        _ notYours: APIHarness.Reply, _ missing: APIHarness.Reply, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(notYours.status == 404 && missing.status == 404, "\(what): \(notYours.status), \(missing.status)", sourceLocation: sourceLocation)
        #expect(notYours.json["title"] as? String == missing.json["title"] as? String, "\(what)", sourceLocation: sourceLocation)
    }

    @Test func devicesAreTheirOwnersAndThoseWhoRunTheTenants() async throws {
        try await APIHarness.with { api in
            let who = try await Self.callers(api)
            let chidi = try await api.token("chidi@acme.test")
            #expect(
                try await api.call("POST", "/v1/devices", token: chidi, json: ["token": "chidi-pixel", "app": "member", "platform": "android"]).status
                    == 201)
            func list(_ token: String, _ user: String) async throws -> APIHarness.Reply {
                try await api.call("GET", "/v1/devices?user=\(user)", token: token)
            }
            // A member asking for another person's devices was 403; now not found, as nobody.
            Self.expectSameAnswer(try await list(who.member, "chidi@acme.test"), try await list(who.member, "nobody@acme.test"), "member")
            Self.expectSameAnswer(try await list(who.manager, "chidi@acme.test"), try await list(who.manager, "nobody@acme.test"), "manager")
            Self.expectSameAnswer(try await list(who.rival, "dana@acme.test"), try await list(who.rival, "nobody@acme.test"), "rival")
            let seen = try await list(who.admin, "chidi@acme.test")
            #expect(seen.status == 200 && seen.items.count == 1)
            #expect(try await api.call("GET", "/v1/devices", token: who.member).items.isEmpty)
            #expect(try await api.call("GET", "/v1/devices", token: who.admin).items.count == 1)
            // Logging someone else's token out is not found, as a token nobody has.
            Self.expectSameAnswer(
                try await api.call("DELETE", "/v1/devices/chidi-pixel", token: who.member),
                try await api.call("DELETE", "/v1/devices/nobodys-token", token: who.member), "member's delete")
            Self.expectSameAnswer(
                try await api.call("DELETE", "/v1/devices/chidi-pixel", token: who.rival),
                try await api.call("DELETE", "/v1/devices/nobodys-token", token: who.rival), "rival's delete")
            #expect(try await api.call("DELETE", "/v1/devices/chidi-pixel", token: who.admin).status == 204)
        }
    }

    @Test func webhooksAreForThoseWhoRunTheTenant() async throws {
        try await APIHarness.with { api in
            let who = try await Self.callers(api)
            let created = try await api.call(
                "POST", "/v1/webhooks", token: who.admin, json: ["url": "https://hooks.example.com/h", "events": ["activity.*"]])
            #expect(created.status == 201)
            let id = try #require(created.json["id"] as? String)
            let missing = UUID().lowercasedString
            let calls: [(String, String, [String: Any]?)] = [
                ("GET", "/v1/webhooks", nil), ("POST", "/v1/webhooks", ["url": "https://hooks.example.com/x", "events": ["*"]]),
                ("GET", "/v1/webhooks/\(id)", nil), ("GET", "/v1/webhooks/\(id)/attempts", nil),
                ("POST", "/v1/webhooks/\(id)/rotate-secret", nil), ("POST", "/v1/webhooks/\(id)/replay", ["since": "1h"]),
                ("DELETE", "/v1/webhooks/\(id)", nil)
            ]
            for (method, path, json) in calls {
                #expect(try await api.call(method, path, token: who.member, json: json).status == 403, "member: \(method) \(path)")
                #expect(try await api.call(method, path, token: who.manager, json: json).status == 403, "manager: \(method) \(path)")
            }
            // Another tenant's key: its own (none), and acme's endpoint as one that does not exist.
            #expect(try await api.call("GET", "/v1/webhooks", token: who.rival).items.isEmpty)
            for suffix in ["", "/attempts"] {
                Self.expectSameAnswer(
                    try await api.call("GET", "/v1/webhooks/\(id)\(suffix)", token: who.rival),
                    try await api.call("GET", "/v1/webhooks/\(missing)\(suffix)", token: who.rival), "rival \(suffix)")
            }
            #expect(try await api.call("GET", "/v1/webhooks/\(id)", token: who.admin).status == 200)
            #expect(try await api.call("DELETE", "/v1/webhooks/\(id)", token: who.admin).status == 204)
        }
    }

    @Test func statisticsAreForThoseWhoRunTheTenant() async throws {
        try await APIHarness.with { api in
            let who = try await Self.callers(api)
            #expect(try await api.call("GET", "/v1/stats", token: who.member).status == 403)
            #expect(try await api.call("GET", "/v1/stats", token: who.manager).status == 403)
            #expect(try await api.call("GET", "/v1/stats", token: who.admin).status == 200)
            #expect(try await api.call("GET", "/v1/stats", token: who.rival).status == 200)
        }
    }

    @Test func anActivityIsMovedByWhoeverThePolicyNames() async throws {
        try await APIHarness.with { api in
            let who = try await Self.callers(api)
            let erin = try await api.token("erin@acme.test")
            let chidi = try await api.token("chidi@acme.test")
            let created = try await api.call(
                "POST", "/v1/activities", token: who.manager,
                json: ["team": "ops", "assignee": "chidi@acme.test", "name": "Ship", "deadline": "2026-12-01"])
            let id = try #require(created.json["id"] as? String)
            let missing = UUID().lowercasedString
            // Who may not see it: not found, as an activity that does not exist.
            // (The other tenant's key acts for its own Chidi.)
            let rival: [(name: String, value: String)] = [("Herald-On-Behalf-Of", "chidi@acme.test")]
            for (name, token, headers) in [("a member", who.member, []), ("another team's manager", erin, []), ("another tenant", who.rival, rival)] {
                Self.expectSameAnswer(
                    try await api.call("POST", "/v1/activities/\(id)/start", token: token, headers: headers),
                    try await api.call("POST", "/v1/activities/\(missing)/start", token: token, headers: headers), name)
            }
            // Who sees it but may not start it: forbidden.
            #expect(try await api.call("POST", "/v1/activities/\(id)/start", token: who.manager).status == 403)
            #expect(try await api.call("POST", "/v1/activities/\(id)/start", token: who.admin).status == 403)
            #expect(try await api.call("POST", "/v1/activities/\(id)/start", token: chidi).status == 200)
            #expect(try await api.call("POST", "/v1/activities/\(id)/complete", token: chidi).status == 200)
            // The assignee never decides on their own request; the team's manager and an admin may.
            #expect(try await api.call("POST", "/v1/activities/\(id)/approve", token: chidi).status == 403)
            #expect(try await api.call("POST", "/v1/activities/\(id)/reject", token: who.admin).status == 200)
        }
    }

    @Test func participantsAreChangedByThoseInTheConversation() async throws {
        try await APIHarness.with { api in
            let who = try await Self.callers(api)
            let erin = try await api.token("erin@acme.test")
            let group = try await api.call(
                "POST", "/v1/conversations", token: who.manager, json: ["with": ["chidi@acme.test", "dana@acme.test"], "name": "Crew", "team": "ops"])
            let id = try #require(group.json["id"] as? String)
            let missing = UUID().lowercasedString
            // Someone not in it: not found, as a conversation that does not exist.
            Self.expectSameAnswer(
                try await api.call("DELETE", "/v1/conversations/\(id)/participants/chidi@acme.test", token: erin),
                try await api.call("DELETE", "/v1/conversations/\(missing)/participants/chidi@acme.test", token: erin), "outsider")
            // In it, but neither its creator nor a manager: forbidden to remove others.
            #expect(try await api.call("DELETE", "/v1/conversations/\(id)/participants/chidi@acme.test", token: who.member).status == 403)
            #expect(try await api.call("DELETE", "/v1/conversations/\(id)/participants/chidi@acme.test", token: who.manager).status == 200)
        }
    }
}
