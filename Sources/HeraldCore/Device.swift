import Foundation

/// Mobile or web platforms a device token comes from.
public enum Platform: String, Sendable, Codable, CaseIterable {
    case ios, android, web
}

/// The push service a token belongs to.
public enum PushProvider: String, Sendable, Codable, CaseIterable {
    case fcm, apns
}

/// A push token of a person, for one app.
///
/// The token itself never leaves the store in output: `tokenPreview` is what people see.
public struct Device: Sendable, Equatable {
    public let id: UUID
    public let owner: PersonReference
    public let token: String
    public let app: AppKind
    public let platform: Platform
    public let provider: PushProvider
    public let createdAt: Date
    public let updatedAt: Date
    public let lastSeenAt: Date
    /// Logged out; a later registration of the same token brings it back.
    public let removedAt: Date?
    /// The provider reported the token dead; it is never used again.
    public let deactivatedAt: Date?
    public let deactivationReason: String?

    public init(
        id: UUID, owner: PersonReference, token: String, app: AppKind, platform: Platform, provider: PushProvider,
        createdAt: Date, updatedAt: Date, lastSeenAt: Date, removedAt: Date?, deactivatedAt: Date?, deactivationReason: String?
    ) {
        self.id = id
        self.owner = owner
        self.token = token
        self.app = app
        self.platform = platform
        self.provider = provider
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.lastSeenAt = lastSeenAt
        self.removedAt = removedAt
        self.deactivatedAt = deactivatedAt
        self.deactivationReason = deactivationReason
    }

    public var tokenPreview: String { TokenDisplay.truncated(token) }

    /// `active`, `removed` or `deactivated`.
    public var state: String {
        if deactivatedAt != nil { return "deactivated" }
        if removedAt != nil { return "removed" }
        return "active"
    }
}

extension Device: Codable {
    enum CodingKeys: String, CodingKey {
        case id, owner, tokenPreview, app, platform, provider, state, createdAt, updatedAt, lastSeenAt, removedAt,
            deactivatedAt, deactivationReason
    }

    /// Encodes the token preview only: JSON output is read by people and logs too.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(owner, forKey: .owner)
        try container.encode(tokenPreview, forKey: .tokenPreview)
        try container.encode(app, forKey: .app)
        try container.encode(platform, forKey: .platform)
        try container.encode(provider, forKey: .provider)
        try container.encode(state, forKey: .state)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(lastSeenAt, forKey: .lastSeenAt)
        try container.encodeIfPresent(removedAt, forKey: .removedAt)
        try container.encodeIfPresent(deactivatedAt, forKey: .deactivatedAt)
        try container.encodeIfPresent(deactivationReason, forKey: .deactivationReason)
    }

    public init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "devices are not decoded from JSON"))
    }
}
