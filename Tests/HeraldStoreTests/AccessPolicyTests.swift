import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The store's SQL conditions (`AccessPolicy+SQL`) pinned to `AccessPolicy`'s rules: for every
/// kind of viewer and every row, the statement finds exactly what the rule allows.
@Suite struct AccessPolicyTests {
    /// Everyone of the fixture, and the tenant itself (nil).
    static let viewers: [String?] = [nil, "root@acme.test", "alice@acme.test", "chidi@acme.test", "dana@acme.test", "erin@acme.test"]

    @Test func aMessageTraceIsFoundExactlyWhenThePolicySaysItMayBeTraced() async throws {
        try await TestDatabase.withStore { store, _ in
            let (acme, group) = try await ChatAccessTests.crew(store)
            let before = try await acme.run {
                try await $0.sendMessage(actor: "alice@acme.test", conversation: group, text: "before", clientID: nil, sentAt: nil).message
            }
            _ = try await acme.run {
                try await $0.changeConversation(actor: "chidi@acme.test", conversation: group, .remove(email: "dana@acme.test"))
            }
            let after = try await acme.run {
                try await $0.sendMessage(actor: "chidi@acme.test", conversation: group, text: "after", clientID: nil, sentAt: nil).message
            }
            for email in Self.viewers {
                for message in [before, after] {
                    let (viewer, participation) = try await acme.run { session -> (Person?, AccessPolicy.Participation?) in
                        guard let email else { return (nil, nil) }
                        let person = try await session.person(email: email)
                        return (person, try await session.participation(of: person, in: group))
                    }
                    let allowed = AccessPolicy(viewer).mayTrace(messageStoredAt: message.storedAt, participation)
                    let found: Bool
                    do {
                        _ = try await acme.run { try await $0.why(message: message.id, viewer: viewer) }
                        found = true
                    } catch let error as StoreError where error.code == .notFound {
                        found = false
                    }
                    #expect(found == allowed, "\(email ?? "the tenant") tracing \"\(message.text)\"")
                }
            }
            // The cases that matter, spelled out: Dana left, so sees the first and not the
            // second; Erin never took part; the admin sees both.
            let dana = try await acme.run { try await $0.person(email: "dana@acme.test") }
            let danaIn = try await acme.run { try await $0.participation(of: dana, in: group) }
            #expect(AccessPolicy(dana).mayTrace(messageStoredAt: before.storedAt, danaIn))
            #expect(!AccessPolicy(dana).mayTrace(messageStoredAt: after.storedAt, danaIn))
        }
    }

    @Test func anActivityIsFoundExactlyWhenThePolicySaysItMayBeSeen() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            let activity = try await acme.assign(to: "chidi@acme.test")
            for email in Self.viewers {
                let (viewer, role) = try await acme.run { session -> (Person?, TeamRole?) in
                    guard let email else { return (nil, nil) }
                    let person = try await session.person(email: email)
                    return (person, try await session.role(of: person.id, in: activity.team.id))
                }
                let allowed = AccessPolicy(viewer).maySeeActivity(assignee: activity.assignee.id, role: role)
                let listed = try await acme.run {
                    try await $0.activities(viewer: viewer, filter: .init(), limit: 100, after: nil).items.contains { $0.id == activity.id }
                }
                #expect(listed == allowed, "\(email ?? "the tenant")")
            }
        }
    }

    @Test func onlyThoseWhoRunTheTenantSetItsDefaults() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            let alice = try await acme.run { try await $0.person(email: "alice@acme.test") }
            let refused = await #expect(throws: StoreError.self) {
                try await acme.run { try await $0.setPreference(.activityApproved, app: nil, mode: .off, for: nil, by: alice) }
            }
            #expect(refused?.code == .forbidden)
            let root = try await acme.run { try await $0.person(email: "root@acme.test") }
            try await acme.run { try await $0.setPreference(.activityApproved, app: nil, mode: .off, for: nil, by: root) }
        }
    }

    /// `deviceVisibleTo`, in listing and in logging out: a device is found exactly when the
    /// policy lets the viewer see its owner.
    @Test func aDeviceIsFoundExactlyWhenThePolicySaysItsOwnerMayBeSeen() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            let owners = ["chidi@acme.test", "dana@acme.test", "alice@acme.test"]
            try await acme.run { session in
                for owner in owners {
                    _ = try await session.registerDevice(
                        email: owner, token: "token-of-\(owner)", app: .member, platform: .android, provider: .fcm)
                }
            }
            for email in Self.viewers {
                let viewer = try await acme.run { session -> Person? in
                    guard let email else { return nil }
                    return try await session.person(email: email)
                }
                let policy = AccessPolicy(viewer)
                let listed = Set(try await acme.run { try await $0.devices(viewer: policy) }.map(\.owner.email))
                for owner in owners {
                    let ownerID = try await acme.run { try await $0.person(email: owner).id }
                    let allowed = policy.maySeePerson(ownerID)
                    #expect(listed.contains(owner) == allowed, "\(email ?? "the tenant") listing \(owner)'s")
                    // Logging it out: done exactly when allowed (then registered again for the next viewer).
                    let removed: Bool
                    do {
                        _ = try await acme.run { try await $0.removeDevice(token: "token-of-\(owner)", viewer: policy) }
                        removed = true
                    } catch let error as StoreError where error.code == .notFound {
                        removed = false
                    }
                    #expect(removed == allowed, "\(email ?? "the tenant") logging out \(owner)'s")
                    if removed {
                        _ = try await acme.run {
                            try await $0.registerDevice(email: owner, token: "token-of-\(owner)", app: .member, platform: .android, provider: .fcm)
                        }
                    }
                }
            }
        }
    }

    /// `takingPart`, for the typing audience: of the readers asked about, exactly those the
    /// policy says take part now (not who left, not who never did).
    @Test func theTypingAudienceIsExactlyThoseWhoTakePartNow() async throws {
        try await TestDatabase.withStore { store, _ in
            let (acme, group) = try await ChatAccessTests.crew(store)
            _ = try await acme.run { try await $0.changeConversation(actor: "dana@acme.test", conversation: group, .leave) }
            let people = try await acme.run { session in
                try await ["alice@acme.test", "chidi@acme.test", "dana@acme.test", "erin@acme.test"].asyncMap { try await session.person(email: $0) }
            }
            let audience = Set(try await acme.run { try await $0.participants(of: group, among: people.map(\.id)) })
            for person in people {
                let participation = try await acme.run { try await $0.participation(of: person, in: group) }
                #expect(audience.contains(person.id) == AccessPolicy(person).mayTakePart(participation), "\(person.email)")
            }
            #expect(audience.count == 2)
        }
    }
}

extension Array {
    fileprivate func asyncMap<Mapped>(_ transform: (Element) async throws -> Mapped) async rethrows -> [Mapped] {
        var result: [Mapped] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
