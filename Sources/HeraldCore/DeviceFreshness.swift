import Foundation

/// How long a device registration stays good without the app registering it again (FCM's
/// guidance, docs/apps.md): the apps re-register about monthly, and each registration stamps
/// the device (`lastSeenAt`). Past `staleAfter` a device is `stale`: nothing is sent to it
/// (`stale_token` in history and `why`) until it registers again. Past `removeAfter` it is
/// removed, as if logged out (Android tokens expire after 270 days without use).
public struct DeviceFreshness: Sendable, Hashable {
    public let staleAfter: Duration
    public let removeAfter: Duration

    /// 60 days stale, 270 removed.
    public static let `default` = DeviceFreshness(checkedStaleAfter: .seconds(60 * 86_400), removeAfter: .seconds(270 * 86_400))

    private init(checkedStaleAfter: Duration, removeAfter: Duration) {
        self.staleAfter = checkedStaleAfter
        self.removeAfter = removeAfter
    }

    /// - Throws: `InputError` unless `staleAfter` is at least a day and `removeAfter` longer
    ///   than it: a device must be stale (and shown so) before it is removed.
    public init(staleAfter: Duration, removeAfter: Duration) throws {
        guard staleAfter >= .seconds(86_400) else {
            throw InputError("HERALD_DEVICE_STALE_AFTER must be at least 1d: apps re-register about monthly")
        }
        guard removeAfter > staleAfter else {
            throw InputError("HERALD_DEVICE_REMOVE_AFTER must be longer than HERALD_DEVICE_STALE_AFTER: a device is stale before it is removed")
        }
        self.init(checkedStaleAfter: staleAfter, removeAfter: removeAfter)
    }

    /// `HERALD_DEVICE_STALE_AFTER` and `HERALD_DEVICE_REMOVE_AFTER` (`60d`, `270d`), each
    /// defaulted when unset.
    /// - Throws: `InputError` for a malformed duration or an order `init` refuses.
    public static func from(environment: [String: String]) throws -> DeviceFreshness {
        func value(_ name: String, _ fallback: Duration) throws -> Duration {
            guard let text = environment[name], !text.isEmpty else { return fallback }
            return try Input.duration(text, field: name)
        }
        return try DeviceFreshness(
            staleAfter: try value("HERALD_DEVICE_STALE_AFTER", Self.default.staleAfter),
            removeAfter: try value("HERALD_DEVICE_REMOVE_AFTER", Self.default.removeAfter))
    }

    /// Whether a device last registered at `lastSeenAt` is stale at `now`.
    public func isStale(lastSeenAt: Date, at now: Date) -> Bool {
        now.timeIntervalSince(lastSeenAt) >= staleAfter.timeInterval
    }

    /// Why a stale device was not sent to, for history and `why`.
    public var staleReason: String {
        "stale_token: the app has not registered this device again for \(Self.days(staleAfter)) days; "
            + "nothing is sent to it until it does"
    }

    static func days(_ duration: Duration) -> Int64 { duration.components.seconds / 86_400 }
}
