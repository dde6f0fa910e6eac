import Foundation
import HeraldAPI
import HeraldBench
import HeraldTesting
import Testing

@testable import HeraldLive

/// People leave teams (docs/concepts.md#people-leave-teams), and an email with the characters
/// an address may hold (`?`, `/`, `#`, `%`) is reached by every route that takes one.
@Suite struct APIDepartureTests {
    /// `o'neil?x/y#z%w@acme.test` is a valid address: created, read, given a token, put in a
    /// team and taken out again, each by its percent-encoded segment.
    @Test func anEmailWithReservedCharactersIsReachedByEveryRoute() async throws {
        try await APIHarness.with { api in
            let admin = try await api.token("root@acme.test")
            let email = "o'neil?x/y#z%w@acme.test"
            let segment = pathSegment(email)
            #expect(segment == "o%27neil%3Fx%2Fy%23z%25w@acme.test")
            let added = try await api.call("POST", "/v1/people", token: admin, json: ["email": email, "name": "Odd Neil"])
            #expect(added.status == 201 && added.headers["location"] == "/v1/people/\(segment)", "\(added.json)")
            let read = try await api.call("GET", "/v1/people/\(segment)", token: admin)
            #expect(read.status == 200 && read.json["email"] as? String == email, "\(read.status) \(read.json)")
            let token = try await api.call("POST", "/v1/people/\(segment)/tokens", token: admin, json: ["name": "test"])
            #expect(token.status == 201, "\(token.json)")
            #expect(try await api.call("PUT", "/v1/teams/ops/members/\(segment)", token: admin, json: ["role": "member"]).status == 201)
            #expect(try await api.call("DELETE", "/v1/teams/ops/members/\(segment)", token: admin).status == 204)
            let again = try await api.call("DELETE", "/v1/teams/ops/members/\(segment)", token: admin)
            #expect(again.status == 404 && again.isProblem)
        }
    }

    /// Alice, manager of ops, leaves the team: at once she sees none of its activities nor its
    /// history, she leaves its group (a system message says so) and its messages after it, and
    /// a live subscription to her presence by Chidi ends on the server at once. Only admins may.
    @Test func someoneTakenOutOfATeamSeesNothingNewOfIt() async throws {
        try await APIHarness.with(.live, hub: true) { api in
            let admin = try await api.token("root@acme.test")
            let alice = try await api.token("alice@acme.test")
            let chidi = try await api.token("chidi@acme.test")
            let activity = try await api.call(
                "POST", "/v1/activities", token: alice, json: ["team": "ops", "assignee": "dana@acme.test", "name": "Fence", "deadline": "2030-01-01"]
            )
            let activityID = try #require(activity.json["id"] as? String)
            let group = try await api.call(
                "POST", "/v1/conversations", token: chidi, json: ["with": ["alice@acme.test", "dana@acme.test"], "name": "Crew", "team": "ops"])
            let groupID = try #require(group.json["id"] as? String)
            #expect(try await api.call("GET", "/v1/activities/\(activityID)", token: alice).status == 200)

            let client = try #require(LiveClient(base: api.base))
            try await client.session(token: chidi) { session in
                _ = try #require(try await session.receive(type: "hello"))
                try await session.send(#"{"type":"presence.subscribe","people":["alice@acme.test"]}"#)
                let answer = try #require(try await session.receive(type: "presence"))
                #expect((answer["people"] as? [[String: Any]])?.first?["person"] as? String == "alice@acme.test")
                #expect(try await api.call("DELETE", "/v1/teams/ops/members/alice@acme.test", token: chidi).status == 403)
                #expect(try await api.call("DELETE", "/v1/teams/ops/members/alice@acme.test", token: admin).status == 204)
                // Chidi's server drops the subscription at once (they share no team, no conversation now).
                let alicePerson = try await api.store.withTenant(api.acme) { try await $0.person(email: "alice@acme.test") }
                let dropped = await eventually(within: .seconds(30)) {
                    api.live.machine.withLock { machine in
                        machine.members.values.allSatisfy { !$0.subscriptions.contains(alicePerson.id) }
                    }
                }
                #expect(dropped, "the subscription to Alice outlived her leaving the team")
            }
            #expect(try await api.call("GET", "/v1/activities/\(activityID)", token: alice).status == 404)
            #expect(try await api.call("GET", "/v1/activities", token: alice).items.allSatisfy { $0["id"] as? String != activityID })
            let messages = try await api.call("GET", "/v1/conversations/\(groupID)/messages", token: chidi).items
            #expect(messages.contains { ($0["text"] as? String)?.contains("left team Field Ops") == true }, "\(messages)")
            #expect(try await api.call("POST", "/v1/conversations/\(groupID)/messages", token: alice, json: ["text": "still here"]).status == 404)
        }
    }
}
