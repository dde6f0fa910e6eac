import Crypto
import Foundation
import HeraldCore
import HeraldPostgres

/// A signed-in session of the admin console: who it acts as (the credential it was
/// exchanged for) and the CSRF token its forms carry.
public struct ConsoleSession: Sendable, Equatable {
    public let id: UUID
    public let authentication: Authentication
    public let csrfToken: String
    public let expiresAt: Date
}

extension Store {
    /// How long a console session lives (never longer than its credential).
    public static let consoleSessionLifetime: Duration = .seconds(8 * 3600)

    /// Exchanges a presented person token or tenant key for a console session, and returns
    /// it with the cookie that names it (`<session id>.<52 base32 characters>`; only the
    /// SHA-256 of the secret part is kept).
    /// - Throws: `AuthenticationFailure` for a credential that is not valid.
    public func startConsoleSession(presenting secret: String, lifetime: Duration = consoleSessionLifetime) async throws -> (
        session: ConsoleSession, cookie: String
    ) {
        let authentication = try await authenticate(secret)
        let id = UUID.v7()
        let cookieSecret = CredentialSecret.randomText()
        let csrf = CredentialSecret.randomText()
        let hash = Data(SHA256.hash(data: Data(cookieSecret.utf8)))
        let seconds = lifetime.timeInterval
        let expiresAt = try await withTenant(authentication.tenant) { session in
            try await session.connection.query(
                """
                INSERT INTO console_sessions (tenant_id, id, credential_id, secret_sha256, csrf_token, expires_at)
                SELECT c.tenant_id, \(id), c.id, \(hash), \(csrf), LEAST(now() + make_interval(secs => \(seconds)), c.expires_at)
                FROM credentials c WHERE c.tenant_id = \(authentication.tenant.id) AND c.id = \(authentication.credentialID)
                RETURNING expires_at
                """
            ).single().decode(Date.self, at: 0)
        }
        let session = ConsoleSession(id: id, authentication: authentication, csrfToken: csrf, expiresAt: expiresAt)
        return (session, id.lowercasedString + "." + cookieSecret)
    }

    /// The live session a cookie names: not signed out, not expired, and its credential
    /// neither revoked nor expired (revoking a token ends its sessions at once).
    /// - Throws: `AuthenticationFailure`.
    public func consoleSession(cookie: String) async throws -> ConsoleSession {
        let parts = cookie.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count == 36, let id = UUID(uuidString: String(parts[0])),
            parts[1].utf8.count == CredentialSecret.secretLength, parts[1].utf8.allSatisfy(Base32.isDigit)
        else { throw AuthenticationFailure.unknown }
        let presented = Data(SHA256.hash(data: Data(parts[1].utf8)))
        return try await pool.withTransaction(setup: DatabaseRole.authenticator.forTransaction) { connection in
            let rows = try await connection.query(
                """
                SELECT s.secret_sha256, s.csrf_token, s.expires_at AS session_expires_at, s.expires_at <= now() AS session_expired,
                       s.ended_at IS NOT NULL AS ended,
                       c.tenant_id, c.id, c.kind, c.person_id, c.expires_at, c.expires_at <= now() AS expired, c.revoked_at IS NOT NULL AS revoked,
                       t.slug, t.name, t.created_at,
                       p.email, p.display_name, p.locale, p.time_zone, p.is_admin, p.created_at AS person_created_at
                FROM console_sessions s
                JOIN credentials c ON c.tenant_id = s.tenant_id AND c.id = s.credential_id
                JOIN tenants t ON t.id = s.tenant_id
                LEFT JOIN people p ON p.tenant_id = c.tenant_id AND p.id = c.person_id
                WHERE s.id = \(id)
                """)
            guard let row = rows.first, CredentialSecret.equalInConstantTime(presented, try row.decode(column: "secret_sha256")),
                !(try row.decode(Bool.self, column: "ended")),
                let kind = CredentialKind(rawValue: try row.decode(column: "kind"))
            else { throw AuthenticationFailure.unknown }
            if try row.decode(Bool.self, column: "revoked") { throw AuthenticationFailure.revoked }
            if try row.decode(Bool.self, column: "session_expired") || (try row.decode(Bool?.self, column: "expired")) == true {
                throw AuthenticationFailure.expired
            }
            return ConsoleSession(
                id: id, authentication: try Authentication(row, kind: kind), csrfToken: try row.decode(column: "csrf_token"),
                expiresAt: try row.decode(column: "session_expires_at"))
        }
    }

    /// Signs a session out: its cookie names nothing from now on.
    public func endConsoleSession(_ session: ConsoleSession) async throws {
        _ = try await withTenant(session.authentication.tenant) { tenantSession in
            try await tenantSession.connection.query(
                "UPDATE console_sessions SET ended_at = now() WHERE tenant_id = \(session.authentication.tenant.id) AND id = \(session.id) AND ended_at IS NULL"
            )
        }
    }
}
