import Crypto
import Foundation
import HeraldCore

/// The one-click unsubscribe links of emails (docs/notifications.md#unsubscribing): a token
/// names the tenant, the person, the event and the app, and carries an HMAC-SHA256 of them
/// with the database's key (`email_link_keys`), so that a link forged or altered is refused
/// and a real one needs no signing in.
public struct EmailLinks: Sendable {
    /// What a link turns off: this event's email to this person on this app.
    public struct Subject: Sendable, Equatable {
        public var tenant: UUID
        public var person: UUID
        public var event: EventKind
        public var app: AppKind

        public init(tenant: UUID, person: UUID, event: EventKind, app: AppKind) {
            self.tenant = tenant
            self.person = person
            self.event = event
            self.app = app
        }
    }

    /// The key's bytes (a `SymmetricKey` is made for each use: it is not `Sendable`).
    let secret: [UInt8]

    public init(secret: String) { self.secret = Array(secret.utf8) }

    var key: SymmetricKey { SymmetricKey(data: secret) }

    /// `<subject>.<mac>`, both base64url: safe in a query string.
    public func token(for subject: Subject) -> String {
        let text = "\(subject.tenant.lowercasedString)/\(subject.person.lowercasedString)/\(subject.event.rawValue)/\(subject.app.rawValue)"
        let mac = HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key)
        return Base64URL.encode(Data(text.utf8)) + "." + Base64URL.encode(Data(mac))
    }

    /// What a token names, when its signature holds (nil: forged, altered or malformed).
    public func subject(of token: String) -> Subject? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= 1024, parts.count == 2, let text = Base64URL.decode(String(parts[0])), let mac = Base64URL.decode(String(parts[1])),
            HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: text, using: key)
        else { return nil }
        let fields = String(decoding: text, as: UTF8.self).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == 4, let tenant = UUID(uuidString: fields[0]), let person = UUID(uuidString: fields[1]),
            let event = EventKind(rawValue: fields[2]), let app = AppKind(rawValue: fields[3])
        else { return nil }
        return Subject(tenant: tenant, person: person, event: event, app: app)
    }
}

extension Store {
    /// What a one-click unsubscribe does: no more email of the link's event on its app to its
    /// person (pushes go on). Answers the person's name, or nil when they are gone.
    public func turnEmailOff(_ subject: EmailLinks.Subject) async throws -> String? {
        try await withTenantTransaction(subject.tenant) { connection, _ in
            try await connection.query(
                """
                WITH person AS (SELECT id, display_name FROM people WHERE tenant_id = \(subject.tenant) AND id = \(subject.person)),
                turned AS (
                    INSERT INTO notification_channels (tenant_id, person_id, event, app, channel)
                    SELECT \(subject.tenant), id, \(subject.event.rawValue), \(subject.app.rawValue), 'push_only' FROM person
                    ON CONFLICT (tenant_id, person_id, event, app) DO UPDATE SET channel = 'push_only', updated_at = now()
                )
                SELECT display_name FROM person
                """
            ).first?.decode(String.self, at: 0)
        }
    }

    /// The links' key, read once.
    public func emailLinks() async throws -> EmailLinks {
        let rows = try await pool.query("SELECT secret FROM email_link_keys WHERE id = 1")
        guard let row = rows.first else { throw StoreError(.notFound, "no email link key: the database is not migrated (0042)") }
        return EmailLinks(secret: try row.decode(String.self, at: 0))
    }
}
