import Foundation
import HeraldCore
import HeraldTemplates
import Testing

@testable import HeraldStore

/// Content and trace are two rights (docs/notifications.md#content-and-trace): a manager or an
/// admin sees that a chat notification was sent, to whom and what became of it, but reads its
/// words (the preview, the group's name, a chat digest's lines, the group's photo) only if they
/// may read the conversation themselves. History's SQL (`notificationWordsReadableBy`) is pinned
/// to `AccessPolicy.mayReadWords` for every viewer and every notification, and every surface
/// that reads history (the list, one notification, `why`, a person's digests) follows it.
@Suite struct HistoryWordsTests {
    static let secret = "the merger closes on Friday"

    @Test func chatWordsReachOnlyThoseWhoMayReadTheConversation() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("dana@acme.test", token: "dana-member", app: .member)
            try await harness.register("chidi@acme.test", token: "chidi-member", app: .member)
            try await harness.register("alice@acme.test", token: "alice-manager", app: .manager)
            // Chidi writes to Dana alone; a group without Alice has a name and a photo; an
            // activity is assigned, so that a notification with words for everyone exists too.
            let (direct, group, groupMessage) = try await harness.store.withTenant(harness.tenant) {
                session -> (ConversationRecord, ConversationRecord, MessageRecord) in
                let direct = try await session.createConversation(
                    actor: "chidi@acme.test", with: ["dana@acme.test"], name: nil, photoURL: nil, team: "ops")
                _ = try await session.addPerson(email: "gus@acme.test", name: "Gus Grey")
                _ = try await session.setMembership(team: "ops", email: "gus@acme.test", role: .member)
                let group = try await session.createConversation(
                    actor: "chidi@acme.test", with: ["dana@acme.test", "gus@acme.test"], name: "Merger Plans",
                    photoURL: "https://img.acme.test/merger.png", team: "ops")
                _ = try await session.sendMessage(
                    actor: "chidi@acme.test", conversation: direct.id, text: Self.secret, clientID: nil, sentAt: nil)
                let groupMessage = try await session.sendMessage(
                    actor: "chidi@acme.test", conversation: group.id, text: Self.secret + " (group)", clientID: nil, sentAt: nil)
                return (direct, group, groupMessage.message)
            }
            _ = try await harness.assign(to: "dana@acme.test", name: "Fence repair")
            // Dana digests chat from now on: a chat digest's lines are words too.
            let dana = try await harness.store.withTenant(harness.tenant) { try await $0.person(email: "dana@acme.test") }
            try await harness.store.withTenant(harness.tenant) { session in
                try await session.setPreference(.chatMessage, app: .member, mode: .digest, for: dana, by: dana)
                _ = try await session.sendMessage(
                    actor: "chidi@acme.test", conversation: direct.id, text: Self.secret + " (digest)", clientID: nil, sentAt: nil)
            }
            _ = try await harness.drain(horizon: .seconds(1))
            _ = try await harness.store.closeDueDigests(at: Date().addingTimeInterval(3700), deadline: .seconds(3600), templates: TemplateCatalog())
            _ = try await harness.drain(horizon: .seconds(1))

            let all = try await harness.store.withTenant(harness.tenant) { session in
                try await session.history(viewer: try await session.person(email: "dana@acme.test"), filter: HistoryFilter(limit: 1_000))
            }
            // Dana, the recipient, reads every one of hers: the two messages, the group's, the digest, the assignment.
            #expect(all.allSatisfy { !$0.wordsWithheld })
            #expect(all.contains { $0.event == "digest" && $0.body.contains(Self.secret) }, "\(all.map(\.body))")
            #expect(all.contains { $0.title.contains("Merger Plans") })

            let viewers: [String?] = [nil, "root@acme.test", "alice@acme.test", "chidi@acme.test", "gus@acme.test"]
            for email in viewers {
                let who = email ?? "the tenant"
                let seen = try await Self.history(seenBy: email, harness)
                // Chidi, a member, is told of nothing; everyone else sees some trace.
                #expect(seen.isEmpty == (email == "chidi@acme.test"), "\(who) sees the trace")
                for (entry, readable, detail) in seen {
                    #expect(entry.wordsWithheld == !readable, "\(who): \(entry.event) to \(entry.recipient.email)")
                    if !readable {
                        #expect(entry.title == AccessPolicy.withheldTitle && entry.body == AccessPolicy.withheldBody)
                        #expect(detail.imageURL == nil && detail.notification.wordsWithheld, "\(who)")
                    }
                    #expect(readable || !(entry.title + entry.body).contains("Merger") && !entry.body.contains(Self.secret))
                    // The trace stays whole: its deliveries and their outcomes.
                    #expect(detail.deliveries.count == detail.notification.devices)
                }
            }
            // Who may not read it still sees the trace: Alice manages the team and sees Dana's
            // direct message was sent, not what it said; so does the admin, and `why` agrees.
            let alices = try await harness.history(as: "alice@acme.test").filter { $0.conversationID == direct.id }
            #expect(!alices.isEmpty && alices.allSatisfy { $0.wordsWithheld && $0.recipient.email == "dana@acme.test" })
            #expect(alices.contains { $0.status == "sent" && $0.devicesSent == 1 })
            let admins = try await harness.history().filter { $0.conversationID == group.id }
            #expect(Set(admins.map(\.recipient.email)) == ["dana@acme.test", "gus@acme.test"] && admins.allSatisfy { $0.wordsWithheld })
            let why = try await harness.store.withTenant(harness.tenant) { session in
                try await session.why(message: groupMessage.id, viewer: try await session.person(email: "root@acme.test"))
            }
            let traced = why.flatMap(\.recipients)
            #expect(traced.count == 2 && traced.allSatisfy { $0.notification.wordsWithheld && $0.imageURL == nil })
            // A person's digests on their page: named to them, not to the admin who looks.
            let (own, others) = try await harness.store.withTenant(harness.tenant) { session -> ([DigestRecord], [DigestRecord]) in
                let admin = try await session.person(email: "root@acme.test")
                return (
                    try await session.digests(of: dana, viewer: AccessPolicy(dana)),
                    try await session.digests(of: dana, viewer: AccessPolicy(admin))
                )
            }
            #expect(!own.isEmpty && own.allSatisfy { $0.scope != AccessPolicy.withheldTitle })
            #expect(others.count == own.count && others.allSatisfy { $0.scope == AccessPolicy.withheldTitle })
        }
    }

    /// Every notification `email` (nil: the tenant) sees in history, whether the policy lets
    /// them read its words, and what `history show` tells them of it.
    static func history(seenBy email: String?, _ harness: DispatchHarness) async throws -> [(HistoryEntry, Bool, HistoryDetail)] {
        try await harness.store.withTenant(harness.tenant) { session in
            var viewer: Person?
            if let email { viewer = try await session.person(email: email) }
            let policy = AccessPolicy(viewer)
            var seen: [(HistoryEntry, Bool, HistoryDetail)] = []
            for entry in try await session.history(viewer: viewer, filter: HistoryFilter(limit: 1_000)) {
                var participation: AccessPolicy.Participation??
                if let conversation = entry.conversationID {
                    var stands: AccessPolicy.Participation?
                    if let viewer { stands = try await session.participation(of: viewer, in: conversation) }
                    participation = .some(stands)
                }
                let readable = policy.mayReadWords(ofNotificationTo: entry.recipient.id, conversation: participation, at: entry.eventAt)
                seen.append((entry, readable, try await session.historyDetail(viewer: viewer, id: entry.id)))
            }
            return seen
        }
    }

    /// Someone who took part reads what was said while they did, and no more once they left.
    @Test func whoLeftReadsWhatWasSaidUntilThen() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("dana@acme.test", token: "dana-member", app: .member)
            let group = try await harness.store.withTenant(harness.tenant) { session -> ConversationRecord in
                let group = try await session.createConversation(
                    actor: "alice@acme.test", with: ["dana@acme.test", "chidi@acme.test"], name: "Night Shift", photoURL: nil, team: "ops")
                _ = try await session.sendMessage(actor: "chidi@acme.test", conversation: group.id, text: "before", clientID: nil, sentAt: nil)
                return group
            }
            _ = try await harness.drain(horizon: .seconds(1))
            try await harness.store.withTenant(harness.tenant) { session in
                _ = try await session.changeConversation(actor: "alice@acme.test", conversation: group.id, .leave)
            }
            _ = try await harness.store.withTenant(harness.tenant) { session in
                try await session.sendMessage(actor: "chidi@acme.test", conversation: group.id, text: "after", clientID: nil, sentAt: nil)
            }
            _ = try await harness.drain(horizon: .seconds(1))
            let alices = try await harness.history(as: "alice@acme.test").filter { $0.recipient.email == "dana@acme.test" }
            #expect(alices.count == 2)
            #expect(alices.first { $0.body.contains("before") }?.wordsWithheld == false, "\(alices.map(\.body))")
            #expect(alices.filter(\.wordsWithheld).count == 1 && !alices.contains { $0.body.contains("after") })
        }
    }
}
