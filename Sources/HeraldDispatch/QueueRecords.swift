import Foundation
import HeraldCore
import HeraldPostgres

/// An outbox event a worker has locked for its fan-out transaction.
struct ClaimedEvent: Sendable {
    let tenantID: UUID
    let id: UUID
    let kind: String
    /// The event's snapshot, as JSON text, its recipients left out (an empty list).
    let payload: String
    /// How many recipients the snapshot names; `nil` when it names them in a way this
    /// version cannot read.
    let recipientCount: Int?
    /// The snapshot's recipients, in order, read apart from it, when there are no more than
    /// a part of them (a large event's are read part by part: decoding the 10,000 of a
    /// large group took 50-80 ms before its first part could start). `nil` for a large event,
    /// and when any of them cannot be read.
    let recipients: [EventRecipient]?
    let occurredAt: Date
}

/// A delivery a worker holds the lease on, with everything needed to send it.
struct ClaimedDelivery: Sendable {
    let tenantID: UUID
    let id: UUID
    /// Part of the delivery's key (tenant, notification, id).
    let notificationID: UUID
    let deviceID: UUID
    let provider: PushProvider
    let app: AppKind
    /// Attempts including this one.
    let attempt: Int
    let firstAttemptAt: Date
    let deadlineAt: Date
    let token: String
    let deviceActive: Bool
    let content: NotificationContent
    let eventAt: Date
    /// The database's clock at the claim.
    let claimedAt: Date
}

/// What became of one attempt, as the worker acknowledges it.
struct Acknowledgement: Sendable {
    typealias Status = DeliveryStatus
    typealias Outcome = AttemptOutcome

    let tenantID: UUID
    let deliveryID: UUID
    let notificationID: UUID
    let deviceID: UUID
    let provider: PushProvider
    let attempt: Int
    let status: Status
    let outcome: Outcome
    /// When the delivery is due again (status `queued`).
    let nextAttemptAt: Date?
    let httpStatus: Int?
    let messageID: String?
    let error: String?
    let startedAt: Date
    let finishedAt: Date
    /// Whether the attempt counts towards the delivery's attempts (and backoff): not when
    /// the trouble was this worker's configuration or an endpoint that was down.
    var spent = true
    /// Whether anything was sent: a delivery held back unsent leaves no attempt in history.
    var attempted = true
    /// The attempt's id in history, in its delivery's millisecond (so in its partition):
    /// chosen once, so that writing the acknowledgement again records the attempt once.
    /// Left out, each write chooses one.
    var attemptID: UUID? = nil
}

/// One notification to write during fan-out.
struct NotificationDraft: Sendable {
    let eventID: UUID
    let kind: EventKind
    let recipientID: UUID
    let app: AppKind
    let teamID: UUID?
    let activityID: UUID?
    let conversationID: UUID?
    let content: NotificationContent
    let eventAt: Date
    /// Set when the recipient must not be pushed (for example, they are viewing the
    /// conversation): the notification is recorded as `suppressed` with this reason.
    let suppressedReason: String?
    /// What fan-out decided (no_device and superseded are found as it writes).
    var decision: NotificationDecision = .send
    /// Quiet hours: the deliveries wait until then.
    var deferredUntil: Date? = nil
    /// Why it waits, in the recipient's words and clock.
    var deferredReason: String? = nil
    /// Quiet hours: a later push of the same conversation counts this one; it gets no delivery.
    var summarizedLater = false
}

/// A recipient as fan-out needs them: where they are and what their badge says.
struct RecipientProfile: Sendable {
    let id: UUID
    let app: AppKind
    let locale: String
    let timeZone: String
    let badge: Int
    var preferences = NotificationPreferences()
    var quietHours: QuietHours? = nil

    /// The decision for an event of `priority` (nil: chat) at `now`: off by preference, later
    /// for quiet hours (P0 activity events break through both), or now.
    func decide(_ event: EventKind, priority: Priority?, now: Date) -> (decision: NotificationDecision, until: Date?, reason: String?) {
        guard preferences.allows(event, app: app, priority: priority) else {
            let origin = preferences.setting(event, app: app).origin == .own ? "they turned" : "the tenant turned"
            return (.preferenceOff, nil, "preference_off: \(origin) \(event.rawValue) off on the \(app.rawValue) app")
        }
        let breaksThrough = NotificationPreferences.breaksThrough(event, priority: priority)
        let zone = TimeZone(identifier: timeZone) ?? .gmt
        guard !breaksThrough, let until = quietHours?.deferral(at: now, in: zone) else { return (.send, nil, nil) }
        return (.quietHours, until, "quiet_hours: deferred until \(Self.local(until, in: zone)) (\(timeZone))")
    }

    /// `2026-11-24 07:00` on the recipient's clock.
    static func local(_ instant: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: instant)
        func pad(_ value: Int?) -> String { let value = value ?? 0; return value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.year ?? 0)-\(pad(parts.month))-\(pad(parts.day)) \(pad(parts.hour)):\(pad(parts.minute))"
    }
}
