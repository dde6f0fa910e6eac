import Foundation
import HeraldKit
import Testing

/// The manager's and the admin's apps on the typed REST, against the real API.
@Suite struct TeamAppTests {
    @Test func aManagerAssignsOnceAndReadsWhatBecameOfIt() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let alice = fixture.client("alice", [server])
        let bob = fixture.client("bob", [server])

        #expect(try await alice.teams().map(\.slug) == ["crew"])
        let members = try await alice.members(of: "crew")
        #expect(members.first { $0.person.email == fixture.email("alice") }?.role == .manager)
        #expect(members.filter { $0.role == .member }.count == 3)

        // The same key twice (an app that did not hear the answer): one activity.
        let key = UUID().uuidString
        let assigned = try await alice.assign(
            "Replace the seal", to: fixture.email("bob"), team: "crew", deadline: "2030-01-15", priority: .p0, idempotencyKey: key)
        let again = try await alice.assign(
            "Replace the seal", to: fixture.email("bob"), team: "crew", deadline: "2030-01-15", priority: .p0, idempotencyKey: key)
        #expect(again.id == assigned.id && assigned.status == .assigned && assigned.priority == .p0)
        #expect(try await alice.activities().items.map(\.id) == [assigned.id])

        // A member may not assign: the server's refusal, typed.
        await #expect {
            try await bob.assign("Nope", to: fixture.email("carol"), team: "crew", deadline: "2030-01-15")
        } throws: { error in
            if case HeraldError.forbidden = error { true } else { false }
        }

        // Fan-out writes Bob's notification (he has no device): history and why say so.
        // (`--drain` exits 1 while deliveries of other tests wait for a provider: the history below is the check.)
        _ = try? await Herald.run(["dispatch", "--drain"], tenant: fixture.tenant)
        let page = try await alice.history(HistoryFilter(activity: assigned.id), limit: 10)
        let told = try #require(page.items.first { $0.recipient.email == fixture.email("bob") })
        #expect(told.event == .activityAssigned && told.status == .noDevice && !told.wordsWithheld)
        let detail = try await alice.notification(told.id)
        #expect(detail.notification.id == told.id && detail.data["activityId"] == assigned.id.uuidString.lowercased())
        let why = try await alice.why(assigned.id, user: fixture.email("bob"))
        #expect(why.first?.event == .activityAssigned && why.first?.recipients.first?.notification.status == .noDevice)
        // Bob sees his own history; a filter by status finds it, and none that is not.
        #expect(try await bob.history(HistoryFilter(status: .noDevice)).items.map(\.id) == [told.id])
        #expect(try await bob.history(HistoryFilter(status: .sent)).items.isEmpty)
    }

    @Test func anAdminManagesPeopleTeamsTokensWebhooksAndThePolicy() async throws {
        var fixture = try await Fixture(people: ["alice", "bob"])
        try await Herald.run(["user", "add", fixture.email("ada"), "--name", "Ada", "--admin"], tenant: fixture.tenant)
        try await fixture.addToken("ada")
        let server = try await Server()
        let ada = fixture.client("ada", [server])

        let erin = try await ada.addPerson(NewPerson(email: fixture.email("erin"), name: "Erin Ng", locale: "de", timeZone: "Europe/Berlin"))
        #expect(erin.locale == "de" && !erin.isAdmin)
        #expect(try await ada.person(fixture.email("erin")).id == erin.id)
        #expect(try await ada.people().count == 4)
        let team = try await ada.createTeam(slug: "night", name: "Night shift")
        #expect(try await ada.teams().contains(team))
        #expect(try await ada.setMembership(fixture.email("erin"), in: "night", role: .manager).role == .manager)
        #expect(try await ada.setMembership(fixture.email("erin"), in: "night", role: .member).role == .member)
        #expect(try await ada.members(of: "night").map(\.person.email) == [fixture.email("erin")])
        try await ada.removeMembership(fixture.email("erin"), from: "night")
        #expect(try await ada.members(of: "night").isEmpty)

        // A token issued for Erin works for Erin's app; revoked, it is refused.
        let issued = try await ada.issueToken(for: fixture.email("erin"), name: "phone", expiresIn: "30d")
        #expect(issued.secret.hasPrefix("hrp_") && issued.credential.expiresAt != nil)
        let erinApp = HeraldClient(server: server.url, token: issued.secret)
        #expect(try await erinApp.me().person?.email == fixture.email("erin"))
        #expect(try await ada.tokens(of: fixture.email("erin")).map(\.id) == [issued.credential.id])
        try await ada.revokeToken(issued.credential.id, of: fixture.email("erin"))
        await #expect {
            try await erinApp.me()
        } throws: { error in
            if case HeraldError.unauthorized = error { true } else { false }
        }
        // Only admins: Bob may not read the statistics.
        await #expect {
            try await fixture.client("bob", [server]).stats()
        } throws: { error in
            if case HeraldError.forbidden = error { true } else { false }
        }
        #expect(try await ada.stats(since: "1h").tenants.allSatisfy { $0.tenant == fixture.tenant })

        // Webhooks: the secret once, a rotation, a replay, removal.
        let hook = try await ada.createWebhook(url: "https://hooks.example.com/herald", events: ["activity.*"], description: "ops")
        #expect(hook.secret.hasPrefix("whsec_") && hook.endpoint.state == "active")
        #expect(try await ada.webhooks().map(\.id) == [hook.endpoint.id])
        let rotated = try await ada.rotateWebhookSecret(hook.endpoint.id)
        #expect(rotated.secret != hook.secret && rotated.endpoint.previousSecretUntil != nil)
        #expect(try await ada.replayWebhook(hook.endpoint.id, since: "1h") == 0)
        #expect(try await ada.webhookAttempts(hook.endpoint.id).items.isEmpty)
        try await ada.removeWebhook(hook.endpoint.id)
        await #expect {
            try await ada.webhook(hook.endpoint.id)
        } throws: { error in
            if case HeraldError.notFound = error { true } else { false }
        }

        // The policy, read, changed and read back.
        var policy = try await ada.policy()
        policy.unopened = .init(p0: "15m")
        policy.approvalReminder.p1 = "2h"
        let stored = try await ada.setPolicy(policy)
        #expect(stored.unopened?[.p0] == "15m" && stored.approvalReminder[.p1] == "2h")
        #expect(try await ada.policy() == stored)
    }
}
