import Foundation

/// A set of values the protocol closes today, as an enum an app can `switch` over: the values
/// this version of HeraldKit knows, and `unknown(String)` for one a newer server sends (kept
/// as it came, written back the same). A string literal makes one, as the JSON does.
public protocol OpenEnum: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral
where RawValue == String, StringLiteralType == String {
    /// The values this version knows.
    static var known: [Self] { get }
    /// A value this version does not know.
    static func unknown(_ value: String) -> Self
    /// Any value: a known one, or `unknown`.
    init(rawValue: String)
}

extension OpenEnum {
    public init(rawValue: String) { self = Self.known.first { $0.rawValue == rawValue } ?? .unknown(rawValue) }
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    public init(from decoder: any Decoder) throws { self.init(rawValue: try decoder.singleValueContainer().decode(String.self)) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
    public var description: String { rawValue }
    /// Whether this version knows the value.
    public var isKnown: Bool { Self.known.contains(self) }
}

/// Which of the tenant's two apps.
public enum AppKind: OpenEnum {
    case member, manager
    case unknown(String)
    public static let known: [AppKind] = [.member, .manager]
    public var rawValue: String {
        switch self {
        case .member: "member"
        case .manager: "manager"
        case .unknown(let value): value
        }
    }
}

/// Where a device runs.
public enum Platform: OpenEnum {
    case ios, android, web
    case unknown(String)
    public static let known: [Platform] = [.ios, .android, .web]
    public var rawValue: String {
        switch self {
        case .ios: "ios"
        case .android: "android"
        case .web: "web"
        case .unknown(let value): value
        }
    }
}

/// Which push service a device's pushes go through.
public enum PushProvider: OpenEnum {
    case apns, fcm, webpush
    case unknown(String)
    public static let known: [PushProvider] = [.apns, .fcm, .webpush]
    public var rawValue: String {
        switch self {
        case .apns: "apns"
        case .fcm: "fcm"
        case .webpush: "webpush"
        case .unknown(let value): value
        }
    }
}

/// What a registered address is for.
public enum DeviceKind: OpenEnum {
    /// A phone's or browser's alerts.
    case alert
    /// An iPhone's push-to-start token for Live Activities.
    case liveActivity
    /// One Live Activity's update token.
    case liveActivityUpdate
    case unknown(String)
    public static let known: [DeviceKind] = [.alert, .liveActivity, .liveActivityUpdate]
    public var rawValue: String {
        switch self {
        case .alert: "alert"
        case .liveActivity: "liveactivity"
        case .liveActivityUpdate: "liveactivity_update"
        case .unknown(let value): value
        }
    }
}

/// Whether a device is still pushed to.
public enum DeviceState: OpenEnum {
    case active, stale, removed, deactivated
    case unknown(String)
    public static let known: [DeviceState] = [.active, .stale, .removed, .deactivated]
    public var rawValue: String {
        switch self {
        case .active: "active"
        case .stale: "stale"
        case .removed: "removed"
        case .deactivated: "deactivated"
        case .unknown(let value): value
        }
    }
}

/// How urgent an activity is (`p0` is the most).
public enum Priority: OpenEnum {
    case p0, p1, p2, p3
    case unknown(String)
    public static let known: [Priority] = [.p0, .p1, .p2, .p3]
    public var rawValue: String {
        switch self {
        case .p0: "p0"
        case .p1: "p1"
        case .p2: "p2"
        case .p3: "p3"
        case .unknown(let value): value
        }
    }
}

/// What happened, as notifications, preferences and the inbox name it.
public enum EventKind: OpenEnum {
    case activityAssigned, activityStarted, activityCompletionRequested, activityApproved, activityRejected
    case activityApprovalReminder, activityEscalated, activityDeadlineSoon, activityOverdue, activityUnopened
    case chatMessage
    case unknown(String)
    public static let known: [EventKind] = [
        .activityAssigned, .activityStarted, .activityCompletionRequested, .activityApproved, .activityRejected,
        .activityApprovalReminder, .activityEscalated, .activityDeadlineSoon, .activityOverdue, .activityUnopened, .chatMessage
    ]
    public var rawValue: String {
        switch self {
        case .activityAssigned: "activity.assigned"
        case .activityStarted: "activity.started"
        case .activityCompletionRequested: "activity.completion_requested"
        case .activityApproved: "activity.approved"
        case .activityRejected: "activity.rejected"
        case .activityApprovalReminder: "activity.approval_reminder"
        case .activityEscalated: "activity.escalated"
        case .activityDeadlineSoon: "activity.deadline_soon"
        case .activityOverdue: "activity.overdue"
        case .activityUnopened: "activity.unopened"
        case .chatMessage: "chat.message"
        case .unknown(let value): value
        }
    }
}
