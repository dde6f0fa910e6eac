import Foundation
import HeraldCore
import HeraldPostgres

/// Person tokens and tenant keys, in the tenant's scope. Creating one returns its secret,
/// the only time it is ever shown; the database keeps a hash.
extension TenantSession {
    /// The longest a credential may live.
    public static let longestCredentialLife: Duration = .seconds(2 * 365 * 86_400)

    /// A token that acts as `email`.
    /// - Parameters:
    ///   - name: what it is for ("Bob's Pixel"); defaults to the person's name.
    ///   - lifetime: nil for a token that does not expire.
    ///   - creator: who made it, for the record (an operator, or a tenant key).
    /// - Throws: `InputError`; `StoreError.notFound` for an unknown person.
    public func createPersonToken(
        for email: String, name: String?, lifetime: Duration?, by creator: String
    ) async throws -> (credential: CredentialRecord, secret: String) {
        let person = try await person(email: email)
        return try await createCredential(.personToken, person: person, name: name ?? "token for \(person.name)", lifetime: lifetime, by: creator)
    }

    /// A key for the tenant's backend.
    /// - Throws: `InputError`.
    public func createTenantKey(name: String, lifetime: Duration?, by creator: String) async throws -> (credential: CredentialRecord, secret: String)
    {
        try await createCredential(.tenantKey, person: nil, name: name, lifetime: lifetime, by: creator)
    }

    private func createCredential(
        _ kind: CredentialKind, person: Person?, name: String, lifetime: Duration?, by creator: String
    ) async throws -> (credential: CredentialRecord, secret: String) {
        let name = try Input.name(name, field: "credential name")
        if let lifetime {
            guard lifetime >= .seconds(60), lifetime <= Self.longestCredentialLife else {
                throw InputError("a credential lives between 1m and 730d")
            }
        }
        let secret = CredentialSecret.generate(kind)
        let id = UUID.v7()
        let seconds: Double? = lifetime.map(\.timeInterval)
        let personID: UUID? = person?.id
        let hash: Data = secret.sha256
        let query: PostgresQuery = """
            INSERT INTO credentials (tenant_id, id, kind, person_id, name, prefix, secret_sha256, created_by, expires_at)
            VALUES (\(tenantID), \(id), \(kind.rawValue), \(personID), \(name), \(secret.prefix), \(hash), \(creator),
                    now() + make_interval(secs => \(seconds)))
            """
        try await connection.query(query)
        return (try await credential(id: id), secret.text)
    }

    /// Credentials of this tenant, newest first: of one kind, or one person's tokens.
    public func credentials(kind: CredentialKind, person email: String? = nil) async throws -> [CredentialRecord] {
        var personID: UUID?
        if let email { personID = try await person(email: email).id }
        return try await connection.query(
            """
            SELECT \(unsafeRaw: Self.credentialColumns) FROM credentials c LEFT JOIN people p ON p.tenant_id = c.tenant_id AND p.id = c.person_id
            WHERE c.tenant_id = \(tenantID) AND c.kind = \(kind.rawValue) AND (\(personID)::uuid IS NULL OR c.person_id = \(personID))
            ORDER BY c.created_at DESC, c.id DESC
            """
        ).map(Self.credential)
    }

    /// One credential of this tenant.
    /// - Throws: `StoreError.notFound` (also for another tenant's id).
    public func credential(id: UUID) async throws -> CredentialRecord {
        let rows = try await connection.query(
            """
            SELECT \(unsafeRaw: Self.credentialColumns) FROM credentials c LEFT JOIN people p ON p.tenant_id = c.tenant_id AND p.id = c.person_id
            WHERE c.tenant_id = \(tenantID) AND c.id = \(id)
            """)
        guard let row = rows.first else { throw StoreError(.notFound, "no credential \(id.lowercasedString)") }
        return try Self.credential(row)
    }

    /// Revokes a credential: the next request that presents it is refused. Revoking one
    /// that is revoked already changes nothing.
    /// - Throws: `StoreError.notFound`.
    @discardableResult
    public func revokeCredential(id: UUID) async throws -> CredentialRecord {
        try await connection.query(
            "UPDATE credentials SET revoked_at = now() WHERE tenant_id = \(tenantID) AND id = \(id) AND revoked_at IS NULL")
        return try await credential(id: id)
    }

    static let credentialColumns = """
        c.id, c.kind, c.name, c.prefix, c.created_at, c.created_by, c.expires_at, c.revoked_at, c.last_used_at, \
        p.id AS person_id, p.email, p.display_name
        """

    static func credential(_ row: PostgresRow) throws -> CredentialRecord {
        let kind: String = try row.decode(column: "kind")
        let personID: UUID? = try row.decode(column: "person_id")
        let person = try personID.map {
            PersonReference(id: $0, email: try row.decode(column: "email"), name: try row.decode(column: "display_name"))
        }
        return CredentialRecord(
            id: try row.decode(column: "id"), kind: CredentialKind(rawValue: kind) ?? .personToken, name: try row.decode(column: "name"),
            person: person, prefix: try row.decode(column: "prefix"), createdAt: try row.decode(column: "created_at"),
            createdBy: try row.decode(column: "created_by"), expiresAt: try row.decode(column: "expires_at"),
            revokedAt: try row.decode(column: "revoked_at"), lastUsedAt: try row.decode(column: "last_used_at"))
    }
}
