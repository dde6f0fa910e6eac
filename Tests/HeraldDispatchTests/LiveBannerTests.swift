import Foundation
import HeraldCore
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
