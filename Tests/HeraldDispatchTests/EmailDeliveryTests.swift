import Foundation
import HeraldCore
import HeraldDispatch
import HeraldEmulator
import HeraldTemplates
import HeraldTestSupport
import HeraldTesting
import Testing

@testable import HeraldStore

/// Email (docs/notifications.md#email) through a real dispatcher to the emulator's relay over a
/// real socket: who is emailed, the headers that thread and unsubscribe, the channels a person
/// chooses, and the relay's refusals.
@Suite struct EmailDeliveryTests {
    /// Chidi has no phone: his assignment is emailed, threaded by its activity, with a one-click
    /// unsubscribe. Alice has a phone: her pushes are not emailed.
    @Test func aPersonWithNoDeviceIsEmailedAndOneWithAPhoneIsNot() async throws {
        let relay = try await EmulatorSMTP.start()
        try await DispatchHarness.with(email: relay) { harness in
            try await harness.register("alice@acme.test", token: "alice-phone", app: .manager)
            let activity = try await harness.assign(priority: .p1)
            _ = try await harness.drain(horizon: .seconds(1))
            try await harness.act(.start, activity.id, by: "chidi@acme.test")
            _ = try await harness.drain(horizon: .seconds(1))

            let emails = relay.emails
            #expect(emails.map(\.to) == [["chidi@acme.test"]])
            let email = try #require(emails.first)
            #expect(email.from == "herald@herald.test")
            let told = try #require(try await harness.history(.init(event: "activity.assigned", limit: 10)).first)
            #expect(told.status == "sent" && told.reason == "no active device on the member app: by email")
            #expect(email.data.contains("Message-ID: <\(told.id.lowercasedString)@herald.test>\r\n"))
            #expect(email.data.contains("References: <activity-\(activity.id.lowercasedString)@herald.test>\r\n"))
            #expect(email.data.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n"))
            let subject = email.data.components(separatedBy: "\r\n").first { $0.hasPrefix("Subject: ") }
            #expect(subject?.hasSuffix("has assigned you a new activity with deadline \(TestDates.deadlineShown): Ship v2.") == true)
            #expect(email.data.contains("To: \"Chidi Okafor\" <chidi@acme.test>\r\n"))
            let detail = try await harness.store.withTenant(harness.tenant) { try await $0.historyDetail(viewer: "root@acme.test", id: told.id) }
            let delivery = try #require(detail.deliveries.first)
            #expect(delivery.provider == "email" && delivery.tokenPreview == "chidi@acme.test" && delivery.status == "sent")
            #expect(delivery.messageID?.contains("queued as \(email.queueID)") == true)
            // Alice's start notice went to her phone only.
            #expect(await harness.emulator.messages().map(\.token) == ["alice-phone"])
        }
        await relay.stop()
    }

    /// Chidi chose email instead of pushes for assignments: his phone hears nothing of one;
    /// with both, it is pushed and emailed.
    @Test func theChannelAPersonChoseDecides() async throws {
        let relay = try await EmulatorSMTP.start()
        try await DispatchHarness.with(email: relay) { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone", app: .member)
            try await harness.store.withTenant(harness.tenant) { session in
                try await session.setChannel(.email, for: .activityAssigned, app: nil, of: try await session.person(email: "chidi@acme.test"))
            }
            _ = try await harness.assign(priority: .p2, name: "By email")
            _ = try await harness.drain(horizon: .seconds(1))
            #expect(relay.emails.count == 1 && relay.emails.first?.data.contains("By email") == true)
            #expect(await harness.emulator.messages().isEmpty)

            try await harness.store.withTenant(harness.tenant) { session in
                try await session.setChannel(.both, for: .activityAssigned, app: .member, of: try await session.person(email: "chidi@acme.test"))
            }
            _ = try await harness.assign(priority: .p2, name: "Both ways")
            _ = try await harness.drain(horizon: .seconds(1))
            #expect(relay.emails.count == 2 && relay.emails.last?.data.contains("Both ways") == true)
            #expect(await harness.emulator.messages().map(\.token) == ["chidi-phone"])
            let preferences = try await harness.store.withTenant(harness.tenant) { session in
                try await session.preferences(for: try await session.person(email: "chidi@acme.test"))
            }
            #expect(preferences.entries.first { $0.event == .activityAssigned && $0.app == .member }?.channel == .both)
        }
        await relay.stop()
    }

    /// Eight emails in a row go over the channel's kept connections (four lanes), not eight.
    @Test func connectionsToTheRelayAreKept() async throws {
        let relay = try await EmulatorSMTP.start()
        try await DispatchHarness.with(email: relay) { harness in
            for index in 0..<8 { _ = try await harness.assign(priority: .p3, name: "Round \(index)") }
            _ = try await harness.drain(horizon: .seconds(1))
            #expect(relay.emails.count == 8)
            #expect((1...4).contains(relay.sessions), "\(relay.sessions) connections")
        }
        await relay.stop()
    }

    /// A relay that takes the connection and never answers holds back email only: Dana's push
    /// goes out while Chidi's email waits for the relay, which the next try reaches.
    @Test func aHangingRelayHoldsBackNoPush() async throws {
        let relay = try await EmulatorSMTP.start()
        // (Every lane's first connection hangs: whichever lane the email takes.)
        relay.hang(sessions: 4)
        try await DispatchHarness.with(sendTimeout: .seconds(2), email: relay) { harness in
            try await harness.register("dana@acme.test", token: "dana-phone", app: .member)
            _ = try await harness.assign(to: "chidi@acme.test", priority: .p2, name: "By a hanging relay")
            _ = try await harness.assign(to: "dana@acme.test", priority: .p2, name: "By push")
            _ = try await harness.drain(horizon: .seconds(60))
            #expect(await harness.emulator.messages().map(\.token) == ["dana-phone"])
            #expect(relay.emails.count == 1)
            let told = try await harness.history(.init(event: "activity.assigned", limit: 10))
            let chidi = try #require(told.first { $0.recipient.email == "chidi@acme.test" })
            let dana = try #require(told.first { $0.recipient.email == "dana@acme.test" })
            let email = try await harness.store.withTenant(harness.tenant) { try await $0.historyDetail(viewer: "root@acme.test", id: chidi.id) }
            let attempts = try #require(email.deliveries.first?.attempts)
            #expect(attempts.count >= 2 && attempts.first?.outcome == "retry", "\(attempts)")
            // The push went out before the relay's silence ran out.
            let first = try #require(attempts.first)
            #expect(try #require(dana.sentAt) < first.finishedAt)
        }
        await relay.stop()
    }

    /// Alice gathers starts into her digest and asked for it by email: when it closes, it is
    /// emailed, titled by its team, and her phone hears nothing of it.
    @Test func aDigestChosenByEmailIsEmailedInsteadOfPushed() async throws {
        let relay = try await EmulatorSMTP.start()
        try await DispatchHarness.with(email: relay) { harness in
            try await harness.register("alice@acme.test", token: "alice-phone", app: .manager)
            try await harness.register("chidi@acme.test", token: "chidi-phone", app: .member)
            try await harness.store.withTenant(harness.tenant) { session in
                let alice = try await session.person(email: "alice@acme.test")
                try await session.setPreference(.activityStarted, app: .manager, mode: .digest, for: alice, by: alice)
                try await session.setDigestChannel(email: true, for: alice)
            }
            let activity = try await harness.assign(priority: .p2, name: "Gathered")
            try await harness.act(.start, activity.id, by: "chidi@acme.test")
            _ = try await harness.drain(horizon: .seconds(1))
            let closings = try await harness.store.closeDueDigests(
                at: Date().addingTimeInterval(3700), deadline: .seconds(3600), templates: TemplateCatalog(), email: true)
            #expect(closings.count == 1)
            _ = try await harness.drain(horizon: .seconds(1))
            #expect(!(await harness.emulator.messages().map(\.token).contains("alice-phone")))
            let email = try #require(relay.emails.first)
            #expect(relay.emails.count == 1 && email.to == ["alice@acme.test"])
            #expect(email.data.contains("Subject: Field Ops: 1 update: Chidi Okafor started Gathered\r\n"), "\(email.data)")
            #expect(!email.data.contains("List-Unsubscribe"))
            let preferences = try await harness.store.withTenant(harness.tenant) { session in
                try await session.preferences(for: try await session.person(email: "alice@acme.test"))
            }
            #expect(preferences.digestChannel == "email")
        }
        await relay.stop()
    }

    /// A 451 is tried again and goes through; a 550 fails, and the third in a row deactivates
    /// the address: a fourth notification is `no_device`.
    @Test func aTemporaryRefusalIsRetriedAndThreePermanentOnesEndTheAddress() async throws {
        let relay = try await EmulatorSMTP.start()
        try await DispatchHarness.with(email: relay) { harness in
            relay.refuse("chidi@acme.test", with: "451 4.3.0 try again later")
            _ = try await harness.assign(priority: .p2, name: "Later")
            _ = try await harness.drain(horizon: .zero)
            #expect(relay.emails.isEmpty)
            relay.refuse("chidi@acme.test", with: nil)
            _ = try await harness.drain(horizon: .seconds(5))
            #expect(relay.emails.count == 1)

            relay.refuse("chidi@acme.test", with: "550 5.1.1 no such user")
            for name in ["One", "Two", "Three"] {
                _ = try await harness.assign(priority: .p2, name: name)
                _ = try await harness.drain(horizon: .seconds(1))
            }
            let failed = try await harness.history(.init(event: "activity.assigned", limit: 10)).filter { $0.status == "failed" }
            #expect(failed.count == 3)
            #expect(try await harness.count("SELECT count(*)::int FROM devices WHERE kind = 'email' AND deactivated_at IS NOT NULL") == 1)
            _ = try await harness.assign(priority: .p2, name: "Four")
            _ = try await harness.drain(horizon: .seconds(1))
            let last = try #require(try await harness.history(.init(event: "activity.assigned", limit: 1)).first)
            #expect(last.status == "no_device")
            #expect(relay.emails.count == 1)
        }
        await relay.stop()
    }
}
