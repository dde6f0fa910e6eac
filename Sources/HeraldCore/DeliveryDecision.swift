import Foundation

/// What fan-out decides for one recipient of one event, before any device is tried: pushed
/// now, without sound, later, or not at all, and why. One pure function of what is known of
/// the recipient at `now` (the instant passed in, never read here).
///
/// In order: someone viewing the conversation gets nothing; then their preference (or the
/// tenant's, or for chat their setting of the conversation) may switch the event off or
/// gather it into their digest (which waits out quiet hours itself); then quiet hours defer
/// it; then a muted conversation is pushed without sound. P0 activity events break through preferences and quiet hours
/// (`NotificationPreferences.breaksThrough`). A chat push deferred while earlier ones of the
/// same conversation wait becomes the one summary of them all.
public struct DeliveryDecision: Sendable, Equatable {
    public var decision: NotificationDecision
    /// When a deferred push goes out.
    public var deferredUntil: Date?
    /// Why, in words for history and `why` (nil when pushed now as it is).
    public var reason: String?
    /// Whether the push plays a sound.
    public var sound: Bool
    /// Whether the push is the summary of `count` messages quiet hours hold back.
    public var summarizes: Int?

    /// What is known of the recipient.
    public struct Recipient: Sendable {
        public var app: AppKind
        public var timeZone: String
        public var preferences: NotificationPreferences
        public var quietHours: QuietHours?

        public init(app: AppKind, timeZone: String, preferences: NotificationPreferences, quietHours: QuietHours?) {
            self.app = app
            self.timeZone = timeZone
            self.preferences = preferences
            self.quietHours = quietHours
        }
    }

    /// Where the recipient stands in the conversation of a chat message.
    public struct Conversation: Sendable {
        public var muted: Bool
        public var viewing: Bool
        /// Messages of the conversation quiet hours hold back for them now.
        public var deferred: Int
        /// Their setting for this conversation, which wins over their chat.message setting.
        public var mode: PushMode?

        public init(muted: Bool, viewing: Bool, deferred: Int, mode: PushMode? = nil) {
            self.muted = muted
            self.viewing = viewing
            self.deferred = deferred
            self.mode = mode
        }
    }

    /// The decision for `event` of `priority` (nil: chat, with `conversation`) at `now`.
    public static func decide(
        _ event: EventKind, priority: Priority?, for recipient: Recipient, in conversation: Conversation? = nil, at now: Date
    ) -> DeliveryDecision {
        let sound = conversation?.muted != true
        if conversation?.viewing == true {
            return DeliveryDecision(decision: .viewing, reason: "viewing: the conversation is open on their device", sound: sound)
        }
        let mode = conversation?.mode ?? recipient.preferences.mode(event, app: recipient.app, priority: priority)
        switch mode {
        case .off:
            let origin =
                conversation?.mode != nil
                ? "they turned this conversation off"
                : recipient.preferences.setting(event, app: recipient.app).origin == .own
                    ? "they turned \(event.rawValue) off on the \(recipient.app.rawValue) app"
                    : "the tenant turned \(event.rawValue) off on the \(recipient.app.rawValue) app"
            return DeliveryDecision(decision: .preferenceOff, reason: "preference_off: \(origin)", sound: sound)
        case .digest:
            return DeliveryDecision(decision: .digest, sound: sound)
        case .immediate:
            break
        }
        let zone = TimeZone.named(recipient.timeZone)
        if !NotificationPreferences.breaksThrough(event, priority: priority), let until = recipient.quietHours?.deferral(at: now, in: zone) {
            let waiting = conversation?.deferred ?? 0
            return DeliveryDecision(
                decision: .quietHours, deferredUntil: until,
                reason: "quiet_hours: deferred until \(local(until, in: zone)) (\(recipient.timeZone))", sound: sound,
                summarizes: waiting > 0 ? waiting + 1 : nil)
        }
        return DeliveryDecision(decision: conversation?.muted == true ? .muted : .send, sound: sound)
    }

    init(decision: NotificationDecision, deferredUntil: Date? = nil, reason: String? = nil, sound: Bool, summarizes: Int? = nil) {
        self.decision = decision
        self.deferredUntil = deferredUntil
        self.reason = reason
        self.sound = sound
        self.summarizes = summarizes
    }

    /// `2026-11-24 07:00` on the recipient's clock.
    public static func local(_ instant: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: instant)
        func pad(_ value: Int?) -> String {
            let value = value ?? 0
            return value < 10 ? "0\(value)" : "\(value)"
        }
        return "\(parts.year ?? 0)-\(pad(parts.month))-\(pad(parts.day)) \(pad(parts.hour)):\(pad(parts.minute))"
    }
}
