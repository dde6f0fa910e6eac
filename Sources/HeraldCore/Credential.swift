import Foundation

/// What a credential is for (docs/api.md).
public enum CredentialKind: String, Sendable, Codable, CaseIterable {
    /// Acts as one person, with that person's roles.
    case personToken = "person_token"
    /// The tenant's backend: acts as a tenant admin, or on behalf of a person it names.
    case tenantKey = "tenant_key"

    /// How its secrets begin, so a leaked one says what it is.
    public var secretPrefix: String {
        switch self {
        case .personToken: "hrp_"
        case .tenantKey: "hrk_"
        }
    }
}

/// A credential as its tenant's admins see it: never its secret.
public struct CredentialRecord: Sendable, Codable, Equatable {
    public let id: UUID
    public let kind: CredentialKind
    public let name: String
    /// The person a token acts as (nil for a tenant key).
    public let person: PersonReference?
    /// The secret's public part, shown to tell credentials apart.
    public let prefix: String
    public let createdAt: Date
    public let createdBy: String
    public let expiresAt: Date?
    public let revokedAt: Date?
    /// To the minute.
    public let lastUsedAt: Date?

    public init(
        id: UUID, kind: CredentialKind, name: String, person: PersonReference?, prefix: String, createdAt: Date, createdBy: String,
        expiresAt: Date?, revokedAt: Date?, lastUsedAt: Date?
    ) {
        self.id = id
        self.kind = kind
        self.name = name
        self.person = person
        self.prefix = prefix
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.lastUsedAt = lastUsedAt
    }
}
