import Foundation
import HeraldCore
import HeraldEmulator
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// Devices addressed by FCM installation id, and devices gone stale (docs/apps.md), against
/// the emulator.
@Suite struct DeviceAddressTests {
    /// 22 characters of base64url, as FirebaseInstallations reports them.
    static let fid = "cX3vT9qLRk2bYw8mN4pZa_"
    static let deadFID = "dead-Kp3LmQ8rT2vW6yZ9x"

    @Test func anInstallationIDIsSentAsMessageFIDAndNoToken() async throws {
        try await DispatchHarness.with { harness in
            _ = try await harness.store.withTenant(harness.tenant) {
                try await $0.registerDevice(
                    email: "chidi@acme.test", token: Self.fid, address: .fid, app: .member, platform: .android, provider: .fcm)
            }
            try await harness.register("chidi@acme.test", token: "chidi-phone-0001", app: .member)
            _ = try await harness.assign()
            let counters = try await harness.drain()
            #expect(counters.sent == 2)
            let messages = await harness.emulator.messages()
            let byFID = try #require(messages.first { $0.address == "fid" })
            #expect(byFID.token == Self.fid)
            let message = try #require(
                (try JSONSerialization.jsonObject(with: Data(byFID.payload.utf8)) as? [String: Any])?["message"] as? [String: Any])
            #expect(message["fid"] as? String == Self.fid)
            #expect(message["token"] == nil)
            // The token device still gets `token`, and no `fid`.
            let byToken = try #require(messages.first { $0.address == "token" })
            let tokenMessage = try #require(
                (try JSONSerialization.jsonObject(with: Data(byToken.payload.utf8)) as? [String: Any])?["message"] as? [String: Any])
            #expect(tokenMessage["token"] as? String == "chidi-phone-0001" && tokenMessage["fid"] == nil)

            // History and the device list say how each device is addressed.
            let entry = try #require(try await harness.history().first)
            let detail = try await harness.store.withTenant(harness.tenant) { try await $0.historyDetail(viewer: "root@acme.test", id: entry.id) }
            #expect(Set(detail.deliveries.map(\.address)) == ["fid", "token"])
            let devices = try await harness.store.withTenant(harness.tenant) {
                try await $0.devices(viewer: AccessPolicy(nil), email: "chidi@acme.test")
            }
            #expect(devices.first { $0.address == .fid }?.state == "active")
        }
    }

    @Test func anUnregisteredInstallationIDIsDeactivated() async throws {
        try await DispatchHarness.with { harness in
            _ = try await harness.store.withTenant(harness.tenant) {
                try await $0.registerDevice(
                    email: "chidi@acme.test", token: Self.deadFID, address: .fid, app: .member, platform: .android, provider: .fcm)
            }
            _ = try await harness.assign()
            let counters = try await harness.drain()
            #expect(counters.deadTokens == 1 && counters.sent == 0)
            let devices = try await harness.store.withTenant(harness.tenant) {
                try await $0.devices(viewer: AccessPolicy(nil), email: "chidi@acme.test")
            }
            let dead = try #require(devices.first)
            #expect(dead.address == .fid && dead.state == "deactivated")
            #expect(dead.deactivationReason?.contains("UNREGISTERED") == true)
            // Registering the retired id again is refused, as for a token.
            await #expect(throws: StoreError.self) {
                try await harness.store.withTenant(harness.tenant) {
                    _ = try await $0.registerDevice(
                        email: "chidi@acme.test", token: Self.deadFID, address: .fid, app: .member, platform: .android, provider: .fcm)
                }
            }
        }
    }

    @Test func anInstallationIDIsFCMsAndWellFormed() async throws {
        try await DispatchHarness.with { harness in
            for (value, provider) in [(Self.fid, PushProvider.apns), ("short", .fcm), ("cX3vT9qLRk2bYw8mN4pZa/", .fcm)] {
                await #expect(throws: InputError.self) {
                    try await harness.store.withTenant(harness.tenant) {
                        _ = try await $0.registerDevice(
                            email: "chidi@acme.test", token: value, address: .fid, app: .member, platform: .android, provider: provider)
                    }
                }
            }
            #expect(try await harness.count("SELECT count(*) FROM devices WHERE kind <> 'email'") == 0)
            // The same text as a token and as an installation id are two devices.
            try await harness.register("chidi@acme.test", token: Self.fid, app: .member)
            _ = try await harness.store.withTenant(harness.tenant) {
                try await $0.registerDevice(
                    email: "chidi@acme.test", token: Self.fid, address: .fid, app: .member, platform: .android, provider: .fcm)
            }
            #expect(try await harness.count("SELECT count(*) FROM devices WHERE kind <> 'email'") == 2)
        }
    }

    /// A device its app has not registered again for 60 days gets nothing, says why, and is
    /// sent to again as soon as it registers.
    @Test func aStaleDeviceIsSkippedWithItsReasonAndComesBackWhenItRegisters() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-old-tablet", app: .member)
            try await harness.register("chidi@acme.test", token: "chidi-phone-0001", app: .member)
            try await harness.register("dana@acme.test", token: "dana-only-phone", app: .member)
            try await harness.store.pool.query(
                """
                UPDATE devices SET last_seen_at = now() - interval '61 days'
                WHERE token IN ('chidi-old-tablet', 'dana-only-phone')
                """)
            let devices = try await harness.store.withTenant(harness.tenant) { try await $0.devices(viewer: AccessPolicy(nil)) }
            #expect(devices.filter { $0.state == "stale" }.map(\.token).sorted() == ["chidi-old-tablet", "dana-only-phone"])

            _ = try await harness.assign(to: "chidi@acme.test")
            _ = try await harness.assign(to: "dana@acme.test", name: "Dana's")
            let counters = try await harness.drain()
            #expect(counters.sent == 1)
            #expect(await harness.emulator.messages().map(\.token) == ["chidi-phone-0001"])

            // Chidi's: sent to the fresh phone; the stale tablet's delivery says why it was not.
            let history = try await harness.history(.init(event: "activity.assigned"))
            let chidi = try #require(history.first { $0.recipient.email == "chidi@acme.test" })
            #expect(chidi.status == "sent")
            let detail = try await harness.store.withTenant(harness.tenant) { try await $0.historyDetail(viewer: "root@acme.test", id: chidi.id) }
            let skipped = try #require(detail.deliveries.first { $0.deviceState == "stale" })
            #expect(skipped.status == "cancelled" && skipped.attempts.isEmpty)
            #expect(skipped.lastError?.hasPrefix("stale_token: ") == true)
            // Dana's only phone is stale: no device, with the reason.
            let dana = try #require(history.first { $0.recipient.email == "dana@acme.test" })
            #expect(dana.status == "no_device")
            #expect(dana.reason?.hasPrefix("stale_token: ") == true)

            // Dana's app registers again: fresh, and the next push reaches it.
            let (again, outcome) = try await harness.store.withTenant(harness.tenant) {
                try await $0.registerDevice(email: "dana@acme.test", token: "dana-only-phone", app: .member, platform: .android, provider: .fcm)
            }
            #expect(outcome == .refreshed && again.state == "active")
            await harness.emulator.clearMessages()
            _ = try await harness.assign(to: "dana@acme.test", name: "Dana's second")
            _ = try await harness.drain()
            #expect(await harness.emulator.messages().map(\.token) == ["dana-only-phone"])
        }
    }

    /// Past `removeAfter` a device is removed by the workers' upkeep (as `herald_dispatcher`),
    /// and comes back when its app registers it.
    @Test func aLongUnregisteredDeviceIsRemovedAndComesBackWhenItRegisters() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-ancient-phone", app: .member)
            try await harness.register("chidi@acme.test", token: "chidi-phone-0001", app: .member)
            try await harness.store.pool.query(
                "UPDATE devices SET last_seen_at = now() - interval '271 days' WHERE token = 'chidi-ancient-phone'")
            let removed = try await harness.store.withDispatcherPool(size: 1) { try await $0.removeExpiredDevices() }
            #expect(removed == 1)
            let devices = try await harness.store.withTenant(harness.tenant) {
                try await $0.devices(viewer: AccessPolicy(nil), email: "chidi@acme.test")
            }
            #expect(devices.first { $0.token == "chidi-ancient-phone" }?.state == "removed")
            #expect(devices.first { $0.token == "chidi-phone-0001" }?.state == "active")
            let (back, outcome) = try await harness.store.withTenant(harness.tenant) {
                try await $0.registerDevice(
                    email: "chidi@acme.test", token: "chidi-ancient-phone", app: .member, platform: .android, provider: .fcm)
            }
            #expect(outcome == .restored && back.state == "active")
        }
    }

    @Test func freshnessComesFromTheEnvironmentAndRefusesNonsense() throws {
        #expect(try DeviceFreshness.from(environment: [:]) == .default)
        let custom = try DeviceFreshness.from(environment: ["HERALD_DEVICE_STALE_AFTER": "30d", "HERALD_DEVICE_REMOVE_AFTER": "90d"])
        #expect(custom.staleAfter == .seconds(30 * 86_400) && custom.removeAfter == .seconds(90 * 86_400))
        #expect(custom.staleReason.contains("30 days"))
        for environment in [
            ["HERALD_DEVICE_STALE_AFTER": "soon"], ["HERALD_DEVICE_STALE_AFTER": "2h"],
            ["HERALD_DEVICE_STALE_AFTER": "300d"], ["HERALD_DEVICE_REMOVE_AFTER": "30d"]
        ] {
            #expect(throws: InputError.self) { try DeviceFreshness.from(environment: environment) }
        }
        let now = Date()
        #expect(custom.isStale(lastSeenAt: now.addingTimeInterval(-31 * 86_400), at: now))
        #expect(!custom.isStale(lastSeenAt: now.addingTimeInterval(-29 * 86_400), at: now))
    }
}
