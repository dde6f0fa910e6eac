import HeraldStore

/// The people most tests work with: team ops (Alice manages it; Chidi, in Tokyo, and Dana
/// are its members), team sales (Erin manages it), and Ada, an admin.
public func addAcmePeople(_ session: TenantSession) async throws {
    _ = try await session.createTeam(slug: "ops", name: "Field Ops")
    _ = try await session.createTeam(slug: "sales", name: "Sales")
    _ = try await session.addPerson(email: "alice@acme.test", name: "Alice Moreau")
    _ = try await session.addPerson(email: "chidi@acme.test", name: "Chidi Okafor", timeZone: "Asia/Tokyo")
    _ = try await session.addPerson(email: "dana@acme.test", name: "Dana Scully")
    _ = try await session.addPerson(email: "erin@acme.test", name: "Erin Hale")
    _ = try await session.addPerson(email: "root@acme.test", name: "Ada Admin", isAdmin: true)
    _ = try await session.setMembership(team: "ops", email: "alice@acme.test", role: .manager)
    _ = try await session.setMembership(team: "ops", email: "chidi@acme.test", role: .member)
    _ = try await session.setMembership(team: "ops", email: "dana@acme.test", role: .member)
    _ = try await session.setMembership(team: "sales", email: "erin@acme.test", role: .manager)
}
