import Foundation

/// Mobile or web platforms a device token comes from.
public enum Platform: String, Sendable, Codable, CaseIterable {
    case ios, android, web
    /// A person's email address (docs/notifications.md#email): kept by Herald, never registered.
    case email

    /// The platforms an app registers devices of.
    public static let registered: [Platform] = [.ios, .android, .web]
}

/// The push service a token belongs to: FCM, APNs, or (`webpush`) the push service a
/// browser's subscription names, reached directly (docs/apps.md#web-push-browsers-and-installed-web-apps).
public enum PushProvider: String, Sendable, Codable, CaseIterable {
    case fcm, apns, webpush
    /// Email to the person's address, through the operator's SMTP relay (docs/notifications.md#email).
    case email

    /// The providers an app registers devices of (a person's email address is Herald's own).
    public static let registered: [PushProvider] = [.fcm, .apns, .webpush]
}

/// How a device is addressed at its provider (docs/apps.md): by the registration token the app
/// obtained, or (FCM only) by its Firebase Installation ID, which apps on the newest Firebase
/// SDKs report instead of a token.
public enum DeviceAddress: String, Sendable, Codable, CaseIterable {
    case token, fid
}

/// What a token is for (docs/apps.md): ordinary pushes, or a P0 activity's Live Activity on iOS
/// (through APNs).
public enum DeviceKind: String, Sendable, Codable, CaseIterable {
    /// Alerts: every push Herald sends.
    case alert
    /// An ActivityKit push-to-start token: starts a Live Activity when a P0 is assigned.
    case liveActivity = "liveactivity"
    /// The update token of one activity's Live Activity, uploaded by the app once it runs
    /// (`PUT /v1/activities/{id}/live-activity`).
    case liveActivityUpdate = "liveactivity_update"
    /// A person's email address, one for each app, kept by Herald from `people.email`.
    case email

    /// The kinds an app registers with `POST /v1/devices` (update tokens have their own call).
    public static let registered: [DeviceKind] = [.alert, .liveActivity]
}

/// A push token (or FCM installation id) of a person, for one app.
///
/// The token itself never leaves the store in output: `tokenPreview` is what people see.
public struct Device: Sendable, Equatable {
    public let id: UUID
    public let owner: PersonReference
    /// The registration token, or the installation id when `address` is `fid`.
    public let token: String
    public let address: DeviceAddress
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
    /// Not registered again within the store's `DeviceFreshness.staleAfter`: not sent to.
    public let isStale: Bool
    public let kind: DeviceKind
    /// The activity whose Live Activity an update token belongs to (`kind` liveactivity_update).
    public let activityID: UUID?

    public init(
        id: UUID, owner: PersonReference, token: String, address: DeviceAddress = .token, app: AppKind, platform: Platform,
        provider: PushProvider, createdAt: Date, updatedAt: Date, lastSeenAt: Date, removedAt: Date?, deactivatedAt: Date?,
        deactivationReason: String?, isStale: Bool = false, kind: DeviceKind = .alert, activityID: UUID? = nil
    ) {
        self.id = id
        self.owner = owner
        self.token = token
        self.address = address
        self.app = app
        self.platform = platform
        self.provider = provider
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.lastSeenAt = lastSeenAt
        self.removedAt = removedAt
        self.deactivatedAt = deactivatedAt
        self.deactivationReason = deactivationReason
        self.isStale = isStale
        self.kind = kind
        self.activityID = activityID
    }

    /// What output shows of the token (`TokenDisplay.preview`).
    public var tokenPreview: String { TokenDisplay.preview(token, provider: provider) }

    /// `active`, `stale`, `removed` or `deactivated`.
    public var state: String {
        if deactivatedAt != nil { return "deactivated" }
        if removedAt != nil { return "removed" }
        return isStale ? "stale" : "active"
    }
}

extension Device: Codable {
    enum CodingKeys: String, CodingKey {
        case id, owner, kind
        case activityID = "activityId"
        case address, tokenPreview, fidPreview, app, platform, provider, state, createdAt,
            updatedAt, lastSeenAt, removedAt, deactivatedAt, deactivationReason
    }

    /// Encodes the token preview only: JSON output is read by people and logs too.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(owner, forKey: .owner)
        try container.encode(kind, forKey: .kind)
        try container.encodeIfPresent(activityID, forKey: .activityID)
        try container.encode(address, forKey: .address)
        try container.encode(tokenPreview, forKey: address == .fid ? .fidPreview : .tokenPreview)
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
