import Foundation
import Testing

/// People, teams, history and stats over HTTP.
@Suite struct APIDirectoryTests {
    @Test func adminsChangePeopleAndTeamsAndMembersOnlyRead() async throws {
        try await APIHarness.with { api in
            let admin = try await api.token("root@acme.test")
            let chidi = try await api.token("chidi@acme.test")
            let added = try await api.call(
                "POST", "/v1/people", token: admin, json: ["email": "Zoe@Acme.test", "name": "Zoe Quinn", "timeZone": "Europe/Paris", "locale": "de"])
            #expect(added.status == 201 && added.headers["location"] == "/v1/people/zoe@acme.test", "\(String(decoding: added.body, as: UTF8.self))")
            #expect(added.json["email"] as? String == "zoe@acme.test")
            let again = try await api.call("POST", "/v1/people", token: admin, json: ["email": "zoe@acme.test", "name": "Zoe"])
            #expect(again.status == 409 && again.isProblem)
            let badZone = try await api.call(
                "POST", "/v1/people", token: admin, json: ["email": "yan@acme.test", "name": "Yan", "timeZone": "Mars/Olympus"])
            #expect(badZone.status == 422 && (badZone.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "timeZone")
            let byMember = try await api.call("POST", "/v1/people", token: chidi, json: ["email": "x@acme.test", "name": "X"])
            #expect(byMember.status == 403 && byMember.isProblem)
            #expect(try await api.call("GET", "/v1/people", token: chidi).items.count == 6)
            #expect(try await api.call("GET", "/v1/people/zoe@acme.test", token: chidi).status == 200)
            #expect(try await api.call("GET", "/v1/people/nobody@acme.test", token: chidi).status == 404)

            let team = try await api.call("POST", "/v1/teams", token: admin, json: ["slug": "night-shift", "name": "Night Shift"])
            #expect(team.status == 201)
            let joined = try await api.call("PUT", "/v1/teams/night-shift/members/zoe@acme.test", token: admin, json: ["role": "manager"])
            #expect(joined.status == 201, "\(String(decoding: joined.body, as: UTF8.self))")
            let changed = try await api.call("PUT", "/v1/teams/night-shift/members/zoe@acme.test", token: admin, json: ["role": "member"])
            #expect(changed.status == 200)
            let badRole = try await api.call("PUT", "/v1/teams/night-shift/members/zoe@acme.test", token: admin, json: ["role": "boss"])
            #expect(badRole.status == 422)
            #expect(try await api.call("GET", "/v1/teams/night-shift/members", token: chidi).items.count == 1)
            #expect(try await api.call("GET", "/v1/teams/nope/members", token: chidi).status == 404)
            #expect(try await api.call("GET", "/v1/teams", token: chidi).items.count == 3)
        }
    }

    @Test func historyAndStatsAreRoleAware() async throws {
        try await APIHarness.with { api in
            let admin = try await api.token("root@acme.test")
            let chidi = try await api.token("chidi@acme.test")
            let history = try await api.call("GET", "/v1/history?limit=10&since=7d", token: chidi)
            #expect(history.status == 200 && history.items.isEmpty)
            #expect(try await api.call("GET", "/v1/history?status=lost", token: chidi).status == 422)
            #expect(try await api.call("GET", "/v1/history?since=yesterday", token: chidi).status == 422)
            #expect(try await api.call("GET", "/v1/history/\(UUID().uuidString)", token: chidi).status == 404)
            #expect(try await api.call("GET", "/v1/history/not-an-id", token: chidi).status == 404)
            let stats = try await api.call("GET", "/v1/stats", token: admin)
            #expect(stats.status == 200, "\(String(decoding: stats.body, as: UTF8.self))")
            #expect(try await api.call("GET", "/v1/stats", token: chidi).status == 403)
        }
    }
}
