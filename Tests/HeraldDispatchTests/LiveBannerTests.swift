import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// Fan-out writes the live channel's in-app banner of each activity notification, pushed or
/// not, to its recipient alone; a chat message reaches open apps as its own frame instead.
@Suite struct LiveBannerTests {
    @Test func eachActivityNotificationIsABannerForItsRecipientOnly() async throws {
        try await DispatchHarness.with { harness in
            let activity = try await harness.assign(to: "chidi@acme.test", name: "Banner")
            _ = try await harness.drain()
            try await harness.store.sequenceLive()
            let head = try await harness.store.liveHead()
            let (chidi, dana) = try await harness.store.withTenant(harness.tenant) {
                (try await $0.person(email: "chidi@acme.test"), try await $0.person(email: "dana@acme.test"))
            }
            let rows = try await harness.store.withTenant(harness.tenant) { try await $0.liveRows(for: [chidi, dana], after: 0, through: head) }
            let banners = rows.compactMap { row -> (UUID, LiveNotification)? in
                if case .notification(let banner) = row.payload { (row.reader, banner) } else { nil }
            }
            #expect(banners.count == 1)
            let (reader, banner) = try #require(banners.first)
            #expect(reader == chidi.id)
            #expect(banner.event == .activityAssigned)
            #expect(banner.activityID == activity.id)
            #expect(banner.title.contains("Banner") || banner.body.contains("Banner"), "\(banner)")
            #expect(banner.badge != nil)
        }
    }
}

/// A chat push to a phone whose app is open in the foreground on a live socket is skipped
/// (reason live); the person's other phones still get theirs, and a dead server's claim counts
/// for nothing.
@Suite struct LiveForegroundTests {
    @Test func thePhoneShowingTheMessageGetsNoPushAndTheOthersDo() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-pixel", app: .member)
            try await harness.register("chidi@acme.test", token: "chidi-tablet", app: .member)
            try await harness.register("dana@acme.test", token: "dana-pixel", app: .member)
            let (server, dead) = (UUID.v7(), UUID.v7())
            try await harness.store.stampLiveServer(dead)
            try await harness.store.pool.query("UPDATE live_servers SET seen_at = now() - interval '1 minute' WHERE id = \(dead)")
            try await harness.store.whileLiveServerRuns(server) {
                try await harness.store.withTenant(harness.tenant) { session in
                    let (chidi, dana) = (try await session.person(email: "chidi@acme.test"), try await session.person(email: "dana@acme.test"))
                    try await session.setLiveForeground(true, device: "chidi-pixel", of: chidi, server: server)
                    try await session.setLiveForeground(true, device: "dana-pixel", of: dana, server: dead)
                    let group = try await session.createConversation(
                        actor: "alice@acme.test", with: ["chidi@acme.test", "dana@acme.test"], name: "Live", photoURL: nil, team: nil)
                    _ = try await session.sendMessage(actor: "alice@acme.test", conversation: group.id, text: "Seen live", clientID: nil, sentAt: nil)
                }
                _ = try await harness.drain(horizon: .seconds(1))
                let pushed = Set(await harness.emulator.messages().map(\.token))
                #expect(!pushed.contains("chidi-pixel"), "the phone showing it was pushed")
                #expect(pushed.contains("chidi-tablet"))
                #expect(pushed.contains("dana-pixel"), "a dead server's socket suppressed a push")
                let skipped = try await harness.count(
                    "SELECT count(*) FROM deliveries WHERE status = 'cancelled' AND last_error LIKE 'live:%'")
                #expect(skipped == 1)
                // The app went to the background: pushed again.
                try await harness.store.withTenant(harness.tenant) { session in
                    let chidi = try await session.person(email: "chidi@acme.test")
                    try await session.setLiveForeground(false, device: "chidi-pixel", of: chidi, server: server)
                }
                #expect(try await harness.count("SELECT count(*) FROM live_devices") == 1)
            }
        }
    }

    /// A socket's `device=` speaks for that phone only while it is its person's: Bob's app is
    /// open on token X, X then registers as Carol's (Dana's here), and her pushes to X are sent.
    /// (They were cancelled as `live`, though she had no socket.)
    @Test func aTokenThatChangedHandsIsPushedToItsNewOwner() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "shared-pixel", app: .member)
            let server = UUID.v7()
            try await harness.store.stampLiveServer(server)
            try await harness.store.withTenant(harness.tenant) { session in
                let chidi = try await session.person(email: "chidi@acme.test")
                try await session.setLiveForeground(true, device: "shared-pixel", of: chidi, server: server)
            }
            try await harness.register("dana@acme.test", token: "shared-pixel", app: .member)
            try await harness.store.withTenant(harness.tenant) { session in
                let direct = try await session.createConversation(
                    actor: "alice@acme.test", with: ["dana@acme.test"], name: nil, photoURL: nil, team: nil)
                _ = try await session.sendMessage(actor: "alice@acme.test", conversation: direct.id, text: "For Dana", clientID: nil, sentAt: nil)
            }
            _ = try await harness.drain(horizon: .seconds(1))
            #expect(await harness.emulator.messages().map(\.token) == ["shared-pixel"])
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE last_error LIKE 'live:%'") == 0)
        }
    }
}
