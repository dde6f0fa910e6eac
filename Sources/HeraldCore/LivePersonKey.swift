import Foundation

/// A person of a tenant, as the live channel's presence records them.
public struct LivePersonKey: Sendable, Hashable {
    public let tenant: UUID
    public let person: UUID

    public init(tenant: UUID, person: UUID) {
        self.tenant = tenant
        self.person = person
    }
}
