import Foundation
import HeraldCore
import HeraldPostgres

/// Who a presented credential is, once checked.
public struct Authentication: Sendable, Equatable {
    public let tenant: Tenant
    public let credentialID: UUID
    public let kind: CredentialKind
    /// The person a token acts as (nil for a tenant key).
    public let person: Person?
    /// When the credential expires (nil: never).
    public let expiresAt: Date?
}

/// Why a presented credential was refused.
public enum AuthenticationFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not shaped like a Herald secret, or no credential has it.
    case unknown
    case revoked
    case expired
    /// The console session was signed out.
    case signedOut

    public var description: String {
        switch self {
        case .unknown: "the credential is not valid"
        case .revoked: "the credential was revoked"
        case .expired: "the credential has expired"
        case .signedOut: "the console session was signed out"
        }
    }
}

extension Store {
    /// Finds the credential a secret belongs to, across tenants (as `herald_authenticator`,
    /// which may read credentials, stamp their last use, and read the people tokens act as),
    /// checks it, and records its use to the minute.
    ///
    /// The read is a transaction in one round trip (`BEGIN`, the role, the statement and
    /// `COMMIT` sent together); the stamp, at most once a minute, a transaction of its own.
    /// - Throws: `AuthenticationFailure`.
    public func authenticate(_ presented: String) async throws -> Authentication {
        guard let secret = CredentialSecret(parsing: presented) else { throw AuthenticationFailure.unknown }
        let rows = try await pool.withTransaction(setup: DatabaseRole.authenticator.forTransaction) { connection in
            try await connection.query(
                """
                SELECT c.tenant_id, c.id, c.kind, c.person_id, c.secret_sha256, c.expires_at, c.expires_at <= now() AS expired,
                       c.revoked_at IS NOT NULL AS revoked, c.last_used_at > now() - interval '1 minute' AS used_lately,
                       t.slug, t.name, t.created_at,
                       p.email, p.display_name, p.locale, p.time_zone, p.is_admin, p.created_at AS person_created_at
                FROM credentials c JOIN tenants t ON t.id = c.tenant_id
                LEFT JOIN people p ON p.tenant_id = c.tenant_id AND p.id = c.person_id
                WHERE c.prefix = \(secret.prefix)
                """, followedBy: "COMMIT")
        }
        // Every row with the prefix is hashed and compared (there is one, but keys are per tenant).
        guard let row = try rows.first(where: { secret.matches(try $0.decode(Data.self, column: "secret_sha256")) }),
            try row.decode(String.self, column: "kind") == secret.kind.rawValue
        else { throw AuthenticationFailure.unknown }
        if try row.decode(Bool.self, column: "revoked") { throw AuthenticationFailure.revoked }
        if try row.decode(Bool?.self, column: "expired") == true { throw AuthenticationFailure.expired }
        let tenantID: UUID = try row.decode(column: "tenant_id")
        let id: UUID = try row.decode(column: "id")
        if try row.decode(Bool?.self, column: "used_lately") != true {
            try await pool.withTransaction(setup: DatabaseRole.authenticator.forTransaction) { connection in
                try await connection.query(
                    "UPDATE credentials SET last_used_at = now() WHERE tenant_id = \(tenantID) AND id = \(id)", followedBy: "COMMIT")
            }
        }
        return try Authentication(row, kind: secret.kind)
    }
}

extension Authentication {
    /// From a row with the credential's `tenant_id`, `id`, `person_id` and `expires_at`, the tenant's
    /// `slug`, `name`, `created_at`, and the person's columns (`email`, `display_name`,
    /// `locale`, `time_zone`, `is_admin`, `person_created_at`; NULL for a tenant key).
    init(_ row: PostgresRow, kind: CredentialKind) throws {
        var person: Person?
        if let personID: UUID = try row.decode(column: "person_id") {
            person = Person(
                id: personID, email: try row.decode(column: "email"), name: try row.decode(column: "display_name"),
                locale: try row.decode(column: "locale"), timeZone: try row.decode(column: "time_zone"),
                isAdmin: try row.decode(column: "is_admin"), createdAt: try row.decode(column: "person_created_at"))
        }
        self.init(
            tenant: Tenant(
                id: try row.decode(column: "tenant_id"), slug: try row.decode(column: "slug"), name: try row.decode(column: "name"),
                createdAt: try row.decode(column: "created_at")),
            credentialID: try row.decode(column: "id"), kind: kind, person: person, expiresAt: try row.decode(column: "expires_at"))
    }
}
