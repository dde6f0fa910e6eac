import Foundation
import HeraldCore
import HeraldTemplates

/// What the dispatcher reads to write an email (docs/notifications.md#email), in the tenant's
/// scope: whose address a device is, and the tenant's own templates.
extension DeliveryQueue {
    /// The owner of an email device.
    public struct MailboxOwner: Sendable, Equatable {
        public let personID: UUID
        public let name: String
        public let locale: String
    }

    /// The person whose address `device` is (nil: no such device any more).
    public func mailboxOwner(tenant: UUID, device: UUID) async throws -> MailboxOwner? {
        try await pool.withTransaction(setup: Store.tenantScope(tenant)) { connection in
            try await connection.query(
                """
                SELECT p.id, p.display_name, p.locale FROM devices d JOIN people p ON p.tenant_id = d.tenant_id AND p.id = d.person_id
                WHERE d.tenant_id = \(tenant) AND d.id = \(device) AND d.kind = 'email'
                """
            ).first.map { row in
                MailboxOwner(
                    personID: try row.decode(UUID.self, at: 0), name: try row.decode(String.self, at: 1), locale: try row.decode(String.self, at: 2))
            }
        }
    }

    /// The tenant's template overrides.
    public func templateOverrides(tenant: UUID) async throws -> [TemplateKey: String] {
        try await pool.withTransaction(setup: Store.tenantScope(tenant)) { connection in
            try await TemplateOverrideRows.read(tenant: tenant, on: connection)
        }
    }
}
