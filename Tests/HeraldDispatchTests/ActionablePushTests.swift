import Foundation
import HeraldCore
import HeraldEmulator
import HeraldTestSupport
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// Pushes a manager or an assignee can act on from the lock screen (docs/apps.md): the
/// category of buttons and the version a button acts on, on both providers.
@Suite struct ActionablePushTests {
    static let memberAPNs = "c41d1ab1e70000000000000000000000000000000000000000000000000000b2"
    static let managerAPNs = "a11ce0000000000000000000000000000000000000000000000000000000000a"

    /// The payload's `aps` (direct APNs: at the top; through FCM: `message.apns.payload`) and
    /// its custom data (APNs: beside `aps`; FCM: `message.data`).
    static func parts(_ message: RecordedMessage) throws -> (aps: [String: Any], data: [String: Any]) {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any])
        if message.provider == "apns" { return (try #require(root["aps"] as? [String: Any]), root) }
        let fcm = try #require(root["message"] as? [String: Any])
        let payload = try #require((fcm["apns"] as? [String: Any])?["payload"] as? [String: Any])
        return (try #require(payload["aps"] as? [String: Any]), try #require(fcm["data"] as? [String: Any]))
    }

    @Test func pushesCarryTheirButtonsAndTheVersionAStaleButtonIsRefused() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: Self.memberAPNs, app: .member, platform: .ios, provider: .apns)
            try await harness.register("chidi@acme.test", token: "chidi-android-member", app: .member)
            try await harness.register("alice@acme.test", token: Self.managerAPNs, app: .manager, platform: .ios, provider: .apns)
            try await harness.register("alice@acme.test", token: "alice-iphone-through-fcm", app: .manager, platform: .ios)

            // Assigned: the assignee's pushes offer Start, at version 1.
            let activity = try await harness.assign()
            _ = try await harness.drain()
            var messages = await harness.emulator.messages()
            #expect(messages.count == 2)
            for message in messages {
                let (aps, data) = try Self.parts(message)
                #expect(aps["category"] as? String == "ACTIVITY_ASSIGNED", "\(message.provider): \(message.payload)")
                #expect(data["category"] as? String == "ACTIVITY_ASSIGNED" && data["version"] as? String == "1")
            }

            // Started: the manager hears of it, with nothing to press (no category).
            await harness.emulator.clearMessages()
            try await harness.act(.start, activity.id, by: "chidi@acme.test")
            _ = try await harness.drain()
            messages = await harness.emulator.messages()
            #expect(messages.count == 2)
            for message in messages {
                let (aps, data) = try Self.parts(message)
                #expect(aps["category"] == nil && data["category"] == nil && data["version"] as? String == "2")
            }

            // Completion requested: the manager's pushes (direct APNs and through FCM) offer
            // Approve and Send back, at version 3.
            await harness.emulator.clearMessages()
            try await harness.act(.complete, activity.id, by: "chidi@acme.test")
            _ = try await harness.drain()
            messages = await harness.emulator.messages()
            #expect(Set(messages.map(\.provider)) == ["apns", "fcm"])
            var shownVersion: Int?
            for message in messages {
                let (aps, data) = try Self.parts(message)
                #expect(aps["category"] as? String == "ACTIVITY_APPROVAL", "\(message.provider): \(message.payload)")
                #expect(data["version"] as? String == "3")
                shownVersion = (data["version"] as? String).flatMap(Int.init)
            }

            // The assignee sends it back from elsewhere; then the manager's Approve button,
            // made for version 3, acts: refused as stale, nothing approved.
            try await harness.act(.reject, activity.id, by: "alice@acme.test")
            try await harness.act(.complete, activity.id, by: "chidi@acme.test")
            let version = try #require(shownVersion)
            await #expect(throws: StoreError.self) {
                try await harness.store.withTenant(harness.tenant) {
                    _ = try await $0.act(.approve, on: activity.id, actor: "alice@acme.test", expectedVersion: version)
                }
            }
            let now = try await harness.store.withTenant(harness.tenant) { try await $0.activity(id: activity.id) }
            #expect(now.status == .completionRequested && now.version == 5)
        }
    }

    @Test func theCategoryIsWhatTheStateMachineLetsTheRecipientDo() {
        #expect(NotificationCategory.offered(for: .assigned, to: .assignee) == .activityAssigned)
        #expect(NotificationCategory.offered(for: .assigned, to: .manager) == nil)
        #expect(NotificationCategory.offered(for: .running, to: .assignee) == nil)
        #expect(NotificationCategory.offered(for: .completionRequested, to: .manager) == .activityApproval)
        #expect(NotificationCategory.offered(for: .completionRequested, to: .assignee) == nil)
        #expect(NotificationCategory.offered(for: .approved, to: .manager) == nil)
        #expect(NotificationCategory.offered(for: .completionRequested, on: .manager) == .activityApproval)
    }

    /// The ids a push carries are the API's, in its one spelling (lower case): an app compares
    /// the push's `activityId` with the id it fetched, as text.
    @Test func aPushCarriesIdsSpelledAsTheAPIWritesThem() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: Self.memberAPNs, app: .member, platform: .ios, provider: .apns)
            try await harness.register("chidi@acme.test", token: "chidi-android-member", app: .member)
            let activity = try await harness.assign()
            _ = try await harness.drain()
            let apiJSON = try HeraldJSONEncoder().string(activity)
            let messages = await harness.emulator.messages()
            #expect(messages.count == 2)
            for message in messages {
                let (aps, data) = try Self.parts(message)
                #expect(data["activityId"] as? String == activity.id.lowercasedString)
                #expect(apiJSON.contains("\"id\":\"\(activity.id.lowercasedString)\""))
                #expect(aps["thread-id"] as? String == activity.id.lowercasedString)
                let ids = data.values.compactMap { $0 as? String }.filter { UUID(uuidString: $0) != nil }
                #expect(!ids.isEmpty && ids.allSatisfy { $0 == $0.lowercased() }, "\(data)")
            }
        }
    }
}
