import Foundation
import HeraldCore
import Testing

/// `AccessPolicy`'s rules as values, with no database.
struct AccessPolicyRuleTests {
    func person(admin: Bool = false) -> Person {
        Person(id: UUID(), email: "p@acme.test", name: "P", locale: "en", timeZone: "UTC", isAdmin: admin, createdAt: Date())
    }

    @Test func theTenantAndItsAdminsRunItAndNobodyElse() {
        #expect(AccessPolicy(nil).runsTheTenant)
        #expect(AccessPolicy(person(admin: true)).maySetTenantDefaults)
        #expect(!AccessPolicy(person()).maySetTenantDefaults)
        #expect(!AccessPolicy(person()).maySeeFailureDetail)
    }

    /// What is pushed to someone, and when, is theirs to choose: not even an admin chooses it
    /// for them (admins set the tenant's defaults), nor the tenant itself.
    @Test func onlyAPersonChangesTheirOwnPreferences() {
        let (member, admin) = (person(), person(admin: true))
        #expect(AccessPolicy(member).mayChangePreferences(of: member.id))
        #expect(!AccessPolicy(admin).mayChangePreferences(of: member.id))
        #expect(!AccessPolicy(nil).mayChangePreferences(of: member.id))
    }

    @Test func aLiveActivityIsItsAssigneesOnTheMemberAppAndItsManagersOnTheManagerApp() {
        let (assignee, manager, admin) = (person(), person(), person(admin: true))
        #expect(AccessPolicy(assignee).liveActivityApps(assignee: assignee.id, manager: manager.id) == [.member])
        #expect(AccessPolicy(manager).liveActivityApps(assignee: assignee.id, manager: manager.id) == [.manager])
        #expect(AccessPolicy(manager).liveActivityApps(assignee: manager.id, manager: manager.id) == [.member, .manager])
        #expect(AccessPolicy(admin).liveActivityApps(assignee: assignee.id, manager: manager.id).isEmpty)
        #expect(AccessPolicy(nil).liveActivityApps(assignee: assignee.id, manager: manager.id).isEmpty)
    }

    @Test func anActivityIsSeenByItsAssigneeItsTeamsManagersAndAdmins() {
        let member = person()
        let other = UUID()
        let policy = AccessPolicy(member)
        #expect(policy.maySeeActivity(assignee: member.id, role: .member))
        #expect(policy.maySeeActivity(assignee: other, role: .manager))
        #expect(!policy.maySeeActivity(assignee: other, role: .member))
        #expect(!policy.maySeeActivity(assignee: other, role: nil))
        #expect(AccessPolicy(person(admin: true)).maySeeActivity(assignee: other, role: nil))
    }

    @Test func someoneWhoLeftReadsUntilTheyLeftAndAdminsTraceButDoNotRead() {
        let left = Date(timeIntervalSince1970: 1_000)
        let member = AccessPolicy(person())
        let admin = AccessPolicy(person(admin: true))
        #expect(member.mayRead(messageStoredAt: left, .left(at: left)))
        #expect(!member.mayRead(messageStoredAt: left.addingTimeInterval(1), .left(at: left)))
        #expect(!member.mayTakePart(.left(at: left)))
        #expect(member.mayTakePart(.present))
        #expect(!member.mayRead(messageStoredAt: left, nil))
        #expect(!admin.mayRead(messageStoredAt: left, nil), "an admin reads no conversation they are not in")
        #expect(admin.mayTrace(messageStoredAt: left, nil))
    }

    @Test func aGroupIsModeratedByItsCreatorItsTeamsManagersAndAdmins() {
        let creator = person()
        #expect(AccessPolicy(creator).mayModerate(creator: creator.id, role: .member))
        #expect(!AccessPolicy(person()).mayModerate(creator: creator.id, role: .member))
        #expect(AccessPolicy(person()).mayModerate(creator: creator.id, role: .manager))
        #expect(AccessPolicy(person(admin: true)).mayModerate(creator: nil, role: nil))
    }
}
