import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStore

@Suite struct DeviceTests {
    let token = "fcm-token-0123456789abcdefghijklmnopqrstuvwxyz"

    @Test func aKnownTokenIsRefreshedMovedRemovedAndRestored() async throws {
        try await TestDatabase.withStore { store, _ in
            let fixture = try await WorkflowFixture.make(store)
            try await fixture.run { session in
                let (first, registered) = try await session.registerDevice(
                    email: "chidi@acme.test", token: token, app: .member, platform: .ios, provider: .fcm)
                #expect(registered == .registered)
                let (again, refreshed) = try await session.registerDevice(
                    email: "chidi@acme.test", token: token, app: .member, platform: .ios, provider: .fcm)
                #expect(refreshed == .refreshed)
                #expect(again.id == first.id)
                #expect(again.updatedAt >= first.updatedAt)

                let (moved, outcome) = try await session.registerDevice(
                    email: "dana@acme.test", token: token, app: .manager, platform: .android, provider: .fcm)
                #expect(outcome == .moved(from: first.owner))
                #expect(moved.id == first.id && moved.owner.email == "dana@acme.test" && moved.app == .manager)

                let removed = try await session.removeDevice(token: token, viewer: AccessPolicy(nil))
                #expect(removed.map(\.state) == ["removed"])
                let (back, restored) = try await session.registerDevice(
                    email: "dana@acme.test", token: token, app: .manager, platform: .android, provider: .fcm)
                #expect(restored == .restored)
                #expect(back.state == "active")
                #expect(try await session.devices(viewer: AccessPolicy(nil)).count == 1)
                #expect(try await session.devices(viewer: AccessPolicy(nil), email: "chidi@acme.test").isEmpty)
            }
        }
    }

    @Test func aTokenTheProviderRetiredIsNeverRegisteredAgain() async throws {
        try await TestDatabase.withStore { store, _ in
            let fixture = try await WorkflowFixture.make(store)
            try await fixture.run { session in
                _ = try await session.registerDevice(email: "chidi@acme.test", token: token, app: .member, platform: .ios, provider: .fcm)
            }
            try await store.pool.query(
                "UPDATE devices SET deactivated_at = now(), deactivation_reason = 'UNREGISTERED' WHERE token = \(token)")
            let error = await #expect(throws: StoreError.self) {
                try await fixture.run { session in
                    _ = try await session.registerDevice(email: "chidi@acme.test", token: token, app: .member, platform: .ios, provider: .fcm)
                }
            }
            #expect(error?.code == .invalid)
            #expect(error?.description.contains("UNREGISTERED") == true)
            #expect(error?.description.contains(token) == false)
        }
    }

    @Test func removingAnUnknownTokenIsNotFound() async throws {
        try await TestDatabase.withStore { store, _ in
            let fixture = try await WorkflowFixture.make(store)
            let error = await #expect(throws: StoreError.self) {
                try await fixture.run { try await $0.removeDevice(token: token, viewer: AccessPolicy(nil)) }
            }
            #expect(error?.code == .notFound)
            #expect(error?.description.contains(token) == false)
        }
    }
}
