import Foundation
import HeraldCore
import HeraldDispatch
import HeraldTemplates
import HeraldTesting
import Testing

@testable import HeraldStore

/// A digest is judged again when it closes, by the access policy as by state
/// (docs/notifications.md#digests), and a batch that fills an open digest opens the next one
/// cleanly.
@Suite struct DigestAccessTests {
    static let templates = TemplateCatalog()

    func gather(_ harness: DispatchHarness, _ email: String, _ event: EventKind, app: AppKind) async throws {
        try await harness.store.withTenant(harness.tenant) { session in
            let person = try await session.person(email: email)
            try await session.setPreference(event, app: app, mode: .digest, for: person, by: person)
        }
    }

    /// Alice, demoted from manager to member after an item was gathered, may no longer see its
    /// activity: it leaves her digest. Chidi, removed from a group, loses its messages' items.
    @Test func whatThePersonMayNoLongerSeeLeavesTheDigest() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("alice@acme.test", token: "alice-manager", app: .manager)
            try await harness.register("chidi@acme.test", token: "chidi-member", app: .member)
            try await gather(harness, "alice@acme.test", .activityStarted, app: .manager)
            try await gather(harness, "chidi@acme.test", .chatMessage, app: .member)
            let secret = try await harness.assign(to: "dana@acme.test", priority: .p2, name: "Confidential restructuring plan")
            try await harness.act(.start, secret.id, by: "dana@acme.test")
            let group = try await harness.store.withTenant(harness.tenant) { session -> ConversationRecord in
                let group = try await session.createConversation(
                    actor: "dana@acme.test", with: ["chidi@acme.test", "alice@acme.test"], name: "Night Shift", photoURL: nil, team: "ops")
                _ = try await session.sendMessage(actor: "dana@acme.test", conversation: group.id, text: "see you", clientID: nil, sentAt: nil)
                return group
            }
            _ = try await harness.drain(horizon: .seconds(1))
            #expect(try await harness.count("SELECT count(*)::int FROM digests WHERE status = 'open'") == 2)

            try await harness.store.withTenant(harness.tenant) { session in
                _ = try await session.setMembership(team: "ops", email: "alice@acme.test", role: .member)
                _ = try await session.changeConversation(actor: "dana@acme.test", conversation: group.id, .remove(email: "chidi@acme.test"))
            }
            let closings = try await harness.store.closeDueDigests(
                at: Date().addingTimeInterval(3700), deadline: .seconds(3600), templates: Self.templates)
            #expect(closings.count == 2 && closings.allSatisfy { if case .empty(_, 1) = $0 { true } else { false } }, "\(closings)")
            _ = try await harness.drain(horizon: .seconds(1))
            // No digest went out (Alice's manager app had the group's message itself, pushed at once).
            let digests = await harness.emulator.messages().filter { ($0.title ?? "").contains("update") || $0.token == "chidi-member" }
            #expect(digests.isEmpty, "\(digests.map { ($0.token, $0.title ?? "") })")
            let left = try await harness.history().filter { $0.decision == .digest }
            #expect(left.count == 2)
            #expect(
                left.allSatisfy { $0.status == "cancelled" && $0.reason == "digest: left the digest before it was sent: they may no longer see it" })
        }
    }

    /// An open digest filled up by the next batch of events is due before another opens for
    /// the same person: the batch is written at once, with no unique violation and no retry
    /// event by event (an error in the log), and the items are 50 and the rest.
    @Test func aBatchThatFillsAnOpenDigestOpensTheNextCleanly() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("alice@acme.test", token: "alice-manager", app: .manager)
            try await gather(harness, "alice@acme.test", .activityStarted, app: .manager)
            func started(_ names: ClosedRange<Int>) async throws {
                for index in names {
                    let activity = try await harness.assign(to: "chidi@acme.test", priority: .p3, name: "Round \(index)")
                    try await harness.act(.start, activity.id, by: "chidi@acme.test")
                }
            }
            try await started(1...45)
            _ = try await harness.drain(horizon: .seconds(1))
            #expect(try await harness.count("SELECT count(*)::int FROM digests WHERE status = 'open' AND items = 45") == 1)
            try await started(46...55)
            let log = CapturedLog(level: .warning)
            try await Dispatcher.with(
                store: harness.store, listen: false, gateway: harness.gateway,
                configuration: .init(retry: RetryPolicy(base: .milliseconds(100), cap: .seconds(2))), logger: log.logger
            ) { dispatcher in
                try await dispatcher.run(.drain(horizon: .seconds(1)))
            }
            #expect(log.lines.isEmpty, "\(log.lines)")
            #expect(try await harness.count("SELECT count(*)::int FROM digests WHERE status = 'sent' AND items = 50") == 1)
            #expect(try await harness.count("SELECT count(*)::int FROM digests WHERE status = 'open' AND items = 5") == 1)
        }
    }
}
