import Foundation
import HeraldCore
import HeraldPostgres
import Logging

/// One tenant's view of the data inside one transaction (see `Store.withTenant`).
/// Every query filters by `tenant.id` as well as relying on row-level security.
public struct TenantSession: Sendable {
    let connection: PostgresConnection
    public let tenant: Tenant
    let logger: Logger
    /// Where the outbox events this transaction writes are noted.
    let ledger: OutboxLedger
    /// When devices go stale (the store's).
    let freshness: DeviceFreshness

    var tenantID: UUID { tenant.id }

    // MARK: People

    /// Adds a person.
    /// - Throws: `InputError` for bad fields; `StoreError.alreadyExists` for a taken email.
    public func addPerson(email: String, name: String, isAdmin: Bool = false, locale: String = "en", timeZone: String = "UTC") async throws -> Person
    {
        let email = try Input.email(email)
        let name = try Input.name(name)
        let locale = try Input.locale(locale)
        let timeZone = try Input.timeZone(timeZone)
        do {
            let row = try await connection.query(
                """
                INSERT INTO people (tenant_id, id, email, display_name, locale, time_zone, is_admin)
                VALUES (\(tenantID), \(UUID.v7()), \(email), \(name), \(locale), \(timeZone), \(isAdmin))
                RETURNING \(unsafeRaw: Self.personColumns)
                """
            ).single()
            return try Self.person(row)
        } catch let error as PostgresError where error.isUniqueViolation {
            throw StoreError(.alreadyExists, "\(email) is already a person in tenant \(tenant.slug)")
        }
    }

    /// The person with this email.
    /// - Throws: `StoreError.notFound`.
    public func person(email: String) async throws -> Person {
        let email = try Input.email(email)
        let rows = try await connection.query(
            "SELECT \(unsafeRaw: Self.personColumns) FROM people WHERE tenant_id = \(tenantID) AND email = \(email)")
        guard let row = rows.first else {
            throw StoreError(.notFound, "no person \(email) in tenant \(tenant.slug)")
        }
        return try Self.person(row)
    }

    /// The person `email` names, as `viewer` may see them (`AccessPolicy.maySeePerson`): someone
    /// not theirs to see is not found, exactly as someone who does not exist.
    /// - Throws: `StoreError.notFound`; `InputError` for what is not an email.
    public func person(email: String, viewer: AccessPolicy) async throws -> Person {
        let person = try await self.person(email: email)
        guard viewer.maySeePerson(person.id) else { throw StoreError(.notFound, "no person \(person.email) in tenant \(tenant.slug)") }
        return person
    }

    /// The person with this id (a credential's person).
    /// - Throws: `StoreError.notFound`.
    public func person(id: UUID) async throws -> Person {
        let rows = try await connection.query(
            "SELECT \(unsafeRaw: Self.personColumns) FROM people WHERE tenant_id = \(tenantID) AND id = \(id)")
        guard let row = rows.first else { throw StoreError(.notFound, "no person \(id.lowercasedString) in tenant \(tenant.slug)") }
        return try Self.person(row)
    }

    public func people() async throws -> [Person] {
        try await connection.query(
            "SELECT \(unsafeRaw: Self.personColumns) FROM people WHERE tenant_id = \(tenantID) ORDER BY email"
        ).map { try Self.person($0) }
    }

    static let personColumns = "id, email, display_name, locale, time_zone, is_admin, created_at"

    /// A person from `personColumns`, which start at column `first`.
    static func person(_ row: PostgresRow, from first: Int = 0) throws -> Person {
        Person(
            id: try row.decode(at: first), email: try row.decode(at: first + 1), name: try row.decode(at: first + 2),
            locale: try row.decode(at: first + 3), timeZone: try row.decode(at: first + 4), isAdmin: try row.decode(at: first + 5),
            createdAt: try row.decode(at: first + 6))
    }

    // MARK: Teams

    /// Creates a team.
    /// - Throws: `StoreError.alreadyExists` when the slug is taken in this tenant.
    public func createTeam(slug: String, name: String) async throws -> Team {
        let slug = try Input.slug(slug, field: "team")
        let name = try Input.name(name, field: "team name")
        do {
            let row = try await connection.query(
                """
                INSERT INTO teams (tenant_id, id, slug, name) VALUES (\(tenantID), \(UUID.v7()), \(slug), \(name))
                RETURNING id, slug, name, created_at
                """
            ).single()
            return try Self.team(row)
        } catch let error as PostgresError where error.isUniqueViolation {
            throw StoreError(.alreadyExists, "team \"\(slug)\" already exists in tenant \(tenant.slug)")
        }
    }

    /// The team with this slug.
    /// - Throws: `StoreError.notFound`.
    public func team(slug: String) async throws -> Team {
        let rows = try await connection.query(
            "SELECT id, slug, name, created_at FROM teams WHERE tenant_id = \(tenantID) AND slug = \(slug)")
        guard let row = rows.first else {
            throw StoreError(.notFound, "no team \"\(slug)\" in tenant \(tenant.slug)")
        }
        return try Self.team(row)
    }

    public func teams() async throws -> [Team] {
        try await connection.query("SELECT id, slug, name, created_at FROM teams WHERE tenant_id = \(tenantID) ORDER BY slug")
            .map(Self.team)
    }

    static func team(_ row: PostgresRow) throws -> Team {
        let (id, slug, name, createdAt) = try row.decode((UUID, String, String, Date).self)
        return Team(id: id, slug: slug, name: name, createdAt: createdAt)
    }

    /// Gives a person a role in a team, replacing any role they had there.
    /// Returns the membership and the role it replaced, if any.
    public func setMembership(team slug: String, email: String, role: TeamRole) async throws -> (Membership, previous: TeamRole?) {
        let team = try await team(slug: slug)
        let person = try await person(email: email)
        let previous = try await self.role(of: person.id, in: team.id)
        try await connection.query(
            """
            INSERT INTO team_members (tenant_id, team_id, person_id, role)
            VALUES (\(tenantID), \(team.id), \(person.id), \(role.rawValue))
            ON CONFLICT (tenant_id, team_id, person_id) DO UPDATE SET role = EXCLUDED.role
            """)
        return (Membership(team: team.slug, person: person.reference, role: role), previous)
    }

    /// The members of a team with their roles.
    public func members(team slug: String) async throws -> [Membership] {
        let team = try await team(slug: slug)
        return try await connection.query(
            """
            SELECT p.id, p.email, p.display_name, m.role
            FROM team_members m JOIN people p ON p.tenant_id = m.tenant_id AND p.id = m.person_id
            WHERE m.tenant_id = \(tenantID) AND m.team_id = \(team.id)
            ORDER BY m.role, p.email
            """
        ).map { row in
            let (id, email, name, role) = try row.decode((UUID, String, String, String).self)
            return Membership(team: team.slug, person: PersonReference(id: id, email: email, name: name), role: try Self.decodeEnum(role))
        }
    }

    /// A person's role in a team, or nil.
    func role(of person: UUID, in team: UUID) async throws -> TeamRole? {
        let rows = try await connection.query(
            "SELECT role FROM team_members WHERE tenant_id = \(tenantID) AND team_id = \(team) AND person_id = \(person)")
        return try rows.first.map { try Self.decodeEnum(try $0.decode(String.self, at: 0)) }
    }

    static func decodeEnum<Value: RawRepresentable>(_ text: String) throws -> Value where Value.RawValue == String {
        guard let value = Value(rawValue: text) else {
            throw PostgresError(kind: .decoding, message: "unexpected \(Value.self) \"\(text)\" in the database")
        }
        return value
    }
}
