import Foundation

/// A registered phone, browser or Live Activity, as `GET /v1/devices` shows it (tokens shortened).
public struct Device: Codable, Sendable, Hashable, Identifiable {
    public var id: UUID
    public var owner: PersonReference
    public var kind: DeviceKind
    /// `token` or `fid`.
    public var address: String
    public var tokenPreview: String?
    public var fidPreview: String?
    public var app: AppKind
    public var platform: Platform
    public var provider: PushProvider
    public var state: DeviceState
    public var activityId: UUID?
    public var lastSeenAt: Date?
}

/// What to register (`POST /v1/devices`).
public enum DeviceRegistration: Sendable, Hashable {
    /// Which of the tenant's apps it is.
    public typealias App = AppKind

    /// The APNs device token as iOS hands it over (bytes); sent in hexadecimal.
    case apns(token: Data, app: App)
    /// An FCM registration token, from an Android (or iOS through FCM) app.
    case fcm(token: String, app: App, platform: Platform)
    /// An FCM installation id (FID), for apps in FCM's installation-id mode.
    case fcmInstallation(fid: String, app: App, platform: Platform)
    /// An iPhone's ActivityKit push-to-start token: a P0 activity then starts a Live Activity.
    case liveActivityPushToStart(token: Data, app: App)

    var body: [String: String] {
        switch self {
        case .apns(let token, let app):
            ["token": token.hexadecimal, "app": app.rawValue, "platform": "ios", "provider": "apns"]
        case .fcm(let token, let app, let platform):
            ["token": token, "app": app.rawValue, "platform": platform.rawValue, "provider": "fcm"]
        case .fcmInstallation(let fid, let app, let platform):
            ["fid": fid, "app": app.rawValue, "platform": platform.rawValue]
        case .liveActivityPushToStart(let token, let app):
            ["token": token.hexadecimal, "app": app.rawValue, "platform": "ios", "provider": "apns", "kind": "liveactivity"]
        }
    }

    /// What `DELETE /v1/devices/{token}` names.
    var address: String {
        switch self {
        case .apns(let token, _), .liveActivityPushToStart(let token, _): token.hexadecimal
        case .fcm(let token, _, _): token
        case .fcmInstallation(let fid, _, _): fid
        }
    }
}

extension Data {
    /// Lower-case hexadecimal, as APNs tokens are written.
    public var hexadecimal: String {
        let digits = Array("0123456789abcdef".unicodeScalars)
        var text = String.UnicodeScalarView()
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(text)
    }
}
