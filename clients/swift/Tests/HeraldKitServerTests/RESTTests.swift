import Foundation
import HeraldKit
import Testing

/// The typed REST client against the real API.
@Suite struct RESTTests {
    @Test func anAppReadsItselfRegistersDevicesAndChangesPreferences() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let bob = fixture.client("bob", [server])
        let me = try await bob.me()
        #expect(me.person?.email == fixture.email("bob") && me.tenant.slug == fixture.tenant && !me.isAdmin)

        let apnsToken = Data((0..<32).map { UInt8($0) })
        let apns = try await bob.register(.apns(token: apnsToken, app: .member))
        #expect(apns.provider == "apns" && apns.platform == "ios" && apns.kind == "alert")
        #expect(try await bob.register(.fcm(token: "fcm-token-\(UUID().uuidString)", app: .member, platform: "android")).provider == "fcm")
        #expect(try await bob.register(.fcmInstallation(fid: "cX3vT9qLRk2bYw8mN4pZa_", app: .member, platform: "android")).address == "fid")
        let start = try await bob.register(.liveActivityPushToStart(token: Data(repeating: 0xab, count: 40), app: .member))
        #expect(start.kind == "liveactivity")
        #expect(try await bob.devices().filter { $0.state == "active" }.count == 4)
        try await bob.remove(.apns(token: apnsToken, app: .member))
        #expect(try await bob.devices().first { $0.id == apns.id }?.state == "removed")

        let changed = try await bob.updatePreferences(
            PreferencesChange(
                events: [.init(event: "activity.started", enabled: false)], quietHours: .set(.init(window: "22:00-07:00", days: ["mon", "tue"])),
                showPresence: false))
        #expect(changed.showPresence == false && changed.quietHours?.window == "22:00-07:00")
        #expect(changed.entries.contains { $0.event == "activity.started" && !$0.enabled })
        #expect(try await bob.updatePreferences(PreferencesChange(quietHours: .off)).quietHours == nil)
        // A digest: the mode and the window.
        let digest = try await bob.updatePreferences(
            PreferencesChange(events: [.init(event: "activity.assigned", app: "member", mode: "digest")], digestWindow: "daily 08:00"))
        #expect(digest.digestWindow == "daily 08:00")
        #expect(digest.entries.contains { $0.event == "activity.assigned" && $0.app == "member" && $0.mode == "digest" && $0.enabled })
        // The channel (email as well as pushes), leaving the mode as it was.
        let both = try await bob.updatePreferences(PreferencesChange(events: [.init(event: "activity.assigned", app: "member", channel: "both")]))
        #expect(both.entries.contains { $0.event == "activity.assigned" && $0.app == "member" && $0.channel == "both" && $0.mode == "digest" })
        // The digest by email, its window kept.
        let mailed = try await bob.updatePreferences(PreferencesChange(digestChannel: "email"))
        #expect(mailed.digestChannel == "email" && mailed.digestWindow == "daily 08:00")
    }

    @Test func problemsAreTypedErrorsNamingTheField() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let bob = fixture.client("bob", [server])
        do {
            _ = try await bob.createConversation(with: ["not an email"])
            Issue.record("a conversation with nobody was created")
        } catch HeraldError.invalid(let problem) {
            #expect(problem.status == 422 && problem.errors?.first?.field == "with[0]")
        }
        await #expect {
            try await bob.conversation(UUID())
        } throws: { error in
            if case HeraldError.notFound(let problem) = error { problem.status == 404 } else { false }
        }
        // A server that is not there: a transport error, not a crash.
        let nowhere = HeraldClient(server: URL(string: "http://127.0.0.1:\(try Server.freePort())")!, token: fixture.token("bob"))
        await #expect {
            try await nowhere.me()
        } throws: { error in
            (error as? HeraldError)?.isTransient == true
        }
    }

    @Test func activitiesMoveOnWithTheVersionTheAppShowedAndAStalePushIsReportedAsStale() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let id = try await Herald.run(
            [
                "activity", "assign", "--as", fixture.email("alice"), "--team", "crew", "--to", fixture.email("bob"), "--name", "Ship v2",
                "--deadline", "2030-12-01", "--priority", "p1"
            ], tenant: fixture.tenant
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        let activityID = try #require(UUID(uuidString: id))
        let bob = fixture.client("bob", [server])
        let alice = fixture.client("alice", [server])
        let page = try await bob.activities(limit: 1)
        #expect(page.items.map(\.id) == [activityID])
        let assigned = try await bob.activity(activityID)
        #expect(assigned.status == .assigned)

        // The assignee's push offered Start with the version it carried.
        let push = try #require(ActivityPush(payload: ["activityId": id, "version": "\(assigned.version)", "category": "ACTIVITY_ASSIGNED"]))
        guard case .done(let running) = try await bob.perform(.start, on: push) else {
            Issue.record("Start from the push was not done")
            return
        }
        #expect(running.status == .running)
        // The same push pressed again (another phone): stale, nothing done.
        #expect(try await bob.perform(.start, on: push) == .stale)
        let completed = try await bob.transition(activityID, .complete, ifVersion: running.version)
        #expect(completed.status == .completionRequested)
        // A manager's push of an older version never approves what they did not see.
        let old = ActivityPush(payload: ["activityId": id, "version": "\(running.version)"])
        #expect(try await alice.perform(.approve, on: try #require(old)) == .stale)
        // Bob may not approve his own work.
        let own = try #require(ActivityPush(payload: ["activityId": id, "version": "\(completed.version)"]))
        guard case .notAllowed = try await bob.perform(.approve, on: own) else {
            Issue.record("bob approved his own activity")
            return
        }
        guard case .done(let approved) = try await alice.perform(.approve, on: own) else {
            Issue.record("the manager's approve was not done")
            return
        }
        #expect(approved.status == .approved)
    }

    @Test func messagesPageBackAndPresenceAnswersForThoseTheCallerMaySee() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let alice = fixture.client("alice", [server])
        let conversation = try await alice.createConversation(with: [fixture.email("bob")])
        for index in 1...5 { _ = try await alice.send(text: "m\(index)", to: conversation.id) }
        let latest = try await alice.messages(in: conversation.id, limit: 2)
        #expect(latest.map(\.text) == ["m4", "m5"])
        let earlier = try await alice.messages(in: conversation.id, limit: 2, before: latest.first?.sequence)
        #expect(earlier.map(\.text) == ["m2", "m3"])
        let first = try await alice.messages(in: conversation.id, limit: 2, before: earlier.first?.sequence)
        #expect(first.map(\.text) == ["m1"])

        let presence = try await alice.presence(of: [fixture.email("bob"), "nobody@elsewhere.test"])
        #expect(presence.people.map(\.person) == [fixture.email("bob")] && presence.people.first?.online == false)
        #expect(presence.unknown == ["nobody@elsewhere.test"])
        #expect(try await alice.presence(of: fixture.email("bob")).online == false)
        #expect(try await alice.liveTicket().hasPrefix("hlt_"))
    }
}
