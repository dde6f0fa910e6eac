import Crypto
import Foundation
import HeraldCore
import HeraldPostgres

extension TenantSession {
    /// How long a live ticket may wait to be used.
    public static let liveTicketLifetime: Duration = .seconds(30)

    /// A single-use ticket for `/v1/live?ticket=…`, standing for the credential and person
    /// (browsers cannot set `Authorization` on a WebSocket). Only its SHA-256 is stored.
    /// - Returns: the ticket (shown once) and when it expires.
    public func createLiveTicket(credential: UUID, person: Person) async throws -> (ticket: String, expiresAt: Date) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let ticket =
            "hlt_"
            + Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let expiresAt = try await connection.query(
            """
            WITH swept AS (DELETE FROM live_tickets WHERE tenant_id = \(tenantID) AND expires_at < now() - interval '1 minute')
            INSERT INTO live_tickets (digest, tenant_id, credential_id, person_id, expires_at)
            VALUES (\(Data(SHA256.hash(data: Data(ticket.utf8)))), \(tenantID), \(credential), \(person.id),
                    now() + make_interval(secs => \(Self.liveTicketLifetime.timeInterval)))
            RETURNING expires_at
            """
        ).single().decode(Date.self, at: 0)
        return (ticket, expiresAt)
    }
}

extension Store {
    /// Uses a live ticket up: the credential it stands for, checked as `authenticate` checks
    /// a presented secret. A ticket works once, within its 30 s.
    /// - Throws: `AuthenticationFailure` (`.unknown` for a used, expired or invented ticket).
    public func redeemLiveTicket(_ ticket: String) async throws -> Authentication {
        guard ticket.hasPrefix("hlt_"), ticket.unicodeScalars.count < 100 else { throw AuthenticationFailure.unknown }
        let digest = Data(SHA256.hash(data: Data(ticket.utf8)))
        let used = try await pool.withTransaction(setup: DatabaseRole.live.forTransaction) { connection in
            try await connection.query(
                "DELETE FROM live_tickets WHERE digest = \(digest) RETURNING tenant_id, credential_id, person_id, expires_at > now()"
            ).first.map { try $0.decode((UUID, UUID, UUID, Bool).self) }
        }
        guard let (tenant, credential, person, fresh) = used, fresh else { throw AuthenticationFailure.unknown }
        let standing = try await credentialStanding([CredentialKey(tenant: tenant, id: credential)]).failures
        if let failure = standing[credential] { throw failure }
        return try await pool.withTransaction(setup: DatabaseRole.authenticator.forTransaction) { connection in
            let rows = try await connection.query(
                """
                SELECT c.tenant_id, c.id, c.kind, c.expires_at, p.id AS person_id, t.slug, t.name, t.created_at,
                       p.email, p.display_name, p.locale, p.time_zone, p.is_admin, p.created_at AS person_created_at
                FROM credentials c JOIN tenants t ON t.id = c.tenant_id
                JOIN people p ON p.tenant_id = c.tenant_id AND p.id = \(person)
                WHERE c.tenant_id = \(tenant) AND c.id = \(credential)
                """)
            guard let row = rows.first, let kind = CredentialKind(rawValue: try row.decode(String.self, column: "kind")) else {
                throw AuthenticationFailure.unknown
            }
            return try Authentication(row, kind: kind)
        }
    }

    /// The credentials revoked or expired since `since` (the `checkedAt` of the call before;
    /// the database's clock), and the console sessions signed out or expired since, by id, and
    /// why: the live channel's check every few seconds, which costs what changed rather than
    /// what it holds sockets for. Credentials removed outright are found by
    /// `credentialStanding`, less often.
    public func credentialsEnded(since: Date) async throws -> (ended: [CredentialKey: AuthenticationFailure], checkedAt: Date) {
        try await pool.withTransaction(setup: DatabaseRole.authenticator.forTransaction) { connection in
            let checkedAt = try await connection.query("SELECT now()").single().decode(Date.self, at: 0)
            var ended: [CredentialKey: AuthenticationFailure] = [:]
            for row in try await connection.query(
                """
                SELECT c.tenant_id, c.id, c.revoked_at IS NOT NULL FROM credentials c
                WHERE c.revoked_at >= \(since) OR (c.expires_at >= \(since) AND c.expires_at <= now())
                """)
            {
                let (tenant, id, revoked) = try row.decode((UUID, UUID, Bool).self)
                ended[CredentialKey(tenant: tenant, id: id)] = revoked ? .revoked : .expired
            }
            for row in try await connection.query(
                """
                SELECT s.tenant_id, s.id, s.ended_at IS NOT NULL FROM console_sessions s
                WHERE s.ended_at >= \(since) OR (s.expires_at >= \(since) AND s.expires_at <= now())
                """)
            {
                let (tenant, id, signedOut) = try row.decode((UUID, UUID, Bool).self)
                ended[CredentialKey(tenant: tenant, id: id)] = signedOut ? .signedOut : .expired
            }
            return (ended, checkedAt)
        }
    }

    /// Of `credentials`, and of the console `sessions`, those no longer good, by id, and why
    /// (revoked, expired, signed out, or gone), and the database's time of the check: the
    /// live channel closes their sockets.
    public func credentialStanding(
        _ credentials: [CredentialKey], sessions: [CredentialKey] = []
    ) async throws -> (failures: [UUID: AuthenticationFailure], checkedAt: Date) {
        try await pool.withTransaction(setup: DatabaseRole.authenticator.forTransaction) { connection in
            guard !credentials.isEmpty else { return ([:], try await connection.query("SELECT now()").single().decode(Date.self, at: 0)) }
            // The time comes with the rows, a row a credential (a socket opened by ticket waits on this).
            let rows = try await connection.query(
                """
                SELECT x.id, c.id IS NULL, c.revoked_at IS NOT NULL, coalesce(c.expires_at <= now(), false), now()
                FROM unnest(\(credentials.map(\.tenant))::uuid[], \(credentials.map(\.id))::uuid[]) AS x(tenant_id, id)
                LEFT JOIN credentials c ON c.tenant_id = x.tenant_id AND c.id = x.id
                """)
            var failures: [UUID: AuthenticationFailure] = [:]
            var checkedAt = Date.distantPast
            for row in rows {
                let (id, gone, revoked, expired, now) = try row.decode((UUID, Bool, Bool, Bool, Date).self)
                checkedAt = now
                if gone {
                    failures[id] = .unknown
                } else if revoked {
                    failures[id] = .revoked
                } else if expired {
                    failures[id] = .expired
                }
            }
            guard !sessions.isEmpty else { return (failures, checkedAt) }
            for row in try await connection.query(
                """
                SELECT x.id, s.id IS NULL, s.ended_at IS NOT NULL, coalesce(s.expires_at <= now(), false)
                FROM unnest(\(sessions.map(\.tenant))::uuid[], \(sessions.map(\.id))::uuid[]) AS x(tenant_id, id)
                LEFT JOIN console_sessions s ON s.tenant_id = x.tenant_id AND s.id = x.id
                """)
            {
                let (id, gone, signedOut, expired) = try row.decode((UUID, Bool, Bool, Bool).self)
                if gone {
                    failures[id] = .unknown
                } else if signedOut {
                    failures[id] = .signedOut
                } else if expired {
                    failures[id] = .expired
                }
            }
            return (failures, checkedAt)
        }
    }
}

/// A credential by its tenant and id (keys begin with the tenant, docs/architecture.md).
public struct CredentialKey: Sendable, Hashable {
    public let tenant: UUID
    public let id: UUID

    public init(tenant: UUID, id: UUID) {
        self.tenant = tenant
        self.id = id
    }
}
