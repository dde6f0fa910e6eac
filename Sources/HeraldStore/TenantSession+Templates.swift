import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTemplates

/// A saved override.
public struct TemplateOverride: Sendable, Codable, Equatable {
    public let event: TemplateEvent
    public let locale: String
    public let source: String
    public let updatedBy: String
    public let updatedAt: Date
}

extension TenantSession {
    /// Validates and saves a tenant's template for an event and locale. Only a tenant admin
    /// may: the wording is the whole tenant's, every team's alike.
    /// - Throws: `StoreError` (`.forbidden`, `.notFound`); `InputError` naming what is wrong
    ///   with the template. Nothing is saved then.
    public func setTemplate(_ event: TemplateEvent, locale: String, source: String, by author: String) async throws -> TemplateOverride {
        let locale = try Input.locale(locale)
        let author = try await requireTemplateEditor(author)
        _ = try MessageTemplate(event: event, source: source)
        let row = try await connection.query(
            """
            INSERT INTO template_overrides (tenant_id, event, locale, source, updated_by)
            VALUES (\(tenantID), \(event.rawValue), \(locale), \(source), \(author.email))
            ON CONFLICT (tenant_id, event, locale) DO UPDATE
                SET source = EXCLUDED.source, updated_by = EXCLUDED.updated_by, updated_at = now()
            RETURNING updated_at
            """
        ).single()
        return TemplateOverride(
            event: event, locale: locale, source: source, updatedBy: author.email, updatedAt: try row.decode(Date.self, at: 0))
    }

    /// Removes a tenant's override, restoring the default. Returns whether there was one.
    /// Only a tenant admin may.
    /// - Throws: `StoreError` (`.forbidden`, `.notFound`).
    public func resetTemplate(_ event: TemplateEvent, locale: String, by actor: String) async throws -> Bool {
        let locale = try Input.locale(locale)
        _ = try await requireTemplateEditor(actor)
        let deleted = try await connection.query(
            "DELETE FROM template_overrides WHERE tenant_id = \(tenantID) AND event = \(event.rawValue) AND locale = \(locale)")
        return (deleted.affectedRows ?? 0) > 0
    }

    private func requireTemplateEditor(_ email: String) async throws -> Person {
        let person = try await person(email: email)
        guard AccessPolicy(person).runsTheTenant else {
            throw StoreError(.forbidden, "only a tenant admin may change the tenant's templates; \(person.email) is not one")
        }
        return person
    }

    /// The tenant's overrides.
    public func templateOverrides() async throws -> [TemplateOverride] {
        try await connection.query(
            """
            SELECT event, locale, source, updated_by, updated_at FROM template_overrides
            WHERE tenant_id = \(tenantID) ORDER BY event, locale
            """
        ).compactMap { row in
            let (event, locale, source, author, at) = try row.decode((String, String, String, String, Date).self)
            return TemplateEvent(rawValue: event).map {
                TemplateOverride(event: $0, locale: locale, source: source, updatedBy: author, updatedAt: at)
            }
        }
    }
}

/// Reads overrides for a `TemplateCatalog` from the database, one tenant transaction each.
public struct StoredTemplateOverrides: TemplateOverrideSource {
    let store: Store

    public init(store: Store) {
        self.store = store
    }

    public func overrides(tenant: UUID) async throws -> [TemplateKey: String] {
        try await store.withTenantTransaction(tenant) { connection, _ in try await TemplateOverrideRows.read(tenant: tenant, on: connection) }
    }
}

/// The one statement that reads a tenant's template overrides, and their decoding.
enum TemplateOverrideRows {
    static func read(tenant: UUID, on connection: PostgresConnection) async throws -> [TemplateKey: String] {
        let rows = try await connection.query("SELECT event, locale, source FROM template_overrides WHERE tenant_id = \(tenant)")
        var result: [TemplateKey: String] = [:]
        for row in rows {
            let (event, locale, source) = try row.decode((String, String, String).self)
            if let event = TemplateEvent(rawValue: event) { result[TemplateKey(event: event, locale: locale)] = source }
        }
        return result
    }
}
