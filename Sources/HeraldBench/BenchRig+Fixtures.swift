import Foundation
import HeraldCore
import HeraldStore

/// The rig's fixtures. They are written set-based, in SQL of their own: 10,000 people
/// added one by one through the workflow would take the bench minutes.
extension BenchRig {
    /// Every bench activity's deadline: far enough away never to matter.
    static let deadline = LocalDate(year: 2030, month: 1, day: 1) ?? LocalDate(Date(), in: .gmt)

    /// A tenant with team `bench`: a manager and `members` members with `devicesPerMember`
    /// Android member-app devices each, written set-based.
    func makeTenant(index: Int, members: Int, devicesPerMember: Int) async throws -> Tenant {
        let tenant = try await store.createTenant(slug: "bench-\(run)-\(index)", name: "Bench \(index)")
        created.withLock { $0.append(tenant) }
        try await store.withTenant(tenant) { session in
            let team = try await session.createTeam(slug: "bench", name: "Bench")
            let boss = try await session.addPerson(email: manager, name: "Bench Manager")
            _ = try await session.setMembership(team: "bench", email: manager, role: .manager)
            let prefix = "b\(run)-\(index)-"
            try await session.addBulkMembers(team: team, members: members, devicesPerMember: devicesPerMember, tokenPrefix: prefix)
            _ = boss
        }
        // Fresh bulk rows have no statistics yet; production tables have (autovacuum). Without
        // them the planner joins 10,000 participants by scanning.
        try await store.analyze(.directory)
        return tenant
    }

    /// The token `makeTenant` gave member `member`'s first device.
    func token(tenant index: Int, member: Int) -> String { "b\(run)-\(index)-\(member)-0" }

    func memberEmails(_ tenant: Tenant) async throws -> [String] {
        try await store.withTenant(tenant) { try await $0.bulkMemberEmails() }
    }

    /// One P0 activity assigned to each member (eight clients at a time).
    func assignToEveryMember(_ tenant: Tenant, count: Int) async throws {
        let members = try await memberEmails(tenant)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<8 {
                group.addTask {
                    for index in stride(from: lane, to: members.count, by: 8) {
                        _ = try await self.assign(tenant, to: members[index])
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    func assign(_ tenant: Tenant, to member: String) async throws -> ActivityRecord {
        try await store.withTenant(tenant) {
            try await $0.assignActivity(
                actor: manager, team: "bench", assignee: member, name: "Bench run \(run)", deadline: Self.deadline, priority: .p0)
        }
    }

    /// A group of everyone in the tenant's team.
    func makeGroup(_ tenant: Tenant) async throws -> UUID {
        let conversation = try await store.withTenant(tenant) { session in
            let team = try await session.team(slug: "bench")
            let boss = try await session.person(email: manager)
            return try await session.addBulkGroup(of: team, by: boss, name: "Everyone")
        }
        try await store.analyze(.participants)
        return conversation
    }

    /// Sends one message to the group; returns when it committed.
    func sendGroupMessage(_ tenant: Tenant, conversation: UUID) async throws -> Date {
        _ = try await store.withTenant(tenant) {
            try await $0.sendMessage(actor: manager, conversation: conversation, text: "All hands at noon", clientID: nil, sentAt: nil)
        }
        return Date()
    }

    /// Commits one assignment every 1/`rate` seconds for `seconds`, each on its own task so a
    /// slow commit does not delay the next; returns each first device's token and commit time.
    func commitAtRate(_ tenant: Tenant, members: [String], rate: Int, seconds: Int) async throws -> [String: Date] {
        let count = min(members.count, rate * seconds)
        let start = ContinuousClock.now
        return try await withThrowingTaskGroup(of: (String, Date).self) { group in
            for index in 0..<count {
                let due = start + .nanoseconds(Int64(index) * 1_000_000_000 / Int64(rate))
                try await Task.sleep(until: due, clock: .continuous)
                group.addTask {
                    _ = try await self.assign(tenant, to: members[index])
                    return (self.token(tenant: 0, member: index), Date())
                }
            }
            var committed: [String: Date] = [:]
            for try await (token, at) in group { committed[token] = at }
            return committed
        }
    }

    /// A tenant whose `deliveries` deliveries were fanned out and each attempted once, as after
    /// a burn-down, with the queue's statistics taken before its attempts existed (as the
    /// burn-down leaves them).
    func makeDeliveredTenant(index: Int, deliveries: Int) async throws -> Tenant {
        let devices = 100
        let people = max(1, deliveries / devices)
        let tenant = try await makeTenant(index: index, members: people, devicesPerMember: devices)
        try await assignToEveryMember(tenant, count: people)
        try await fanOutEverything()
        try await analyzeQueue()
        try await store.withTenant(tenant) { try await $0.markEveryDeliverySent() }
        return tenant
    }
}
