import Foundation
import HeraldCore
import HeraldPostgres

/// An outbox event a worker has locked for its fan-out transaction.
struct ClaimedEvent: Sendable {
    let tenantID: UUID
    let id: UUID
    let kind: String
    /// The event's snapshot, as JSON text.
    let payload: String
    let occurredAt: Date
}

/// A delivery a worker holds the lease on, with everything needed to send it.
struct ClaimedDelivery: Sendable {
    let tenantID: UUID
    let id: UUID
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
    let deviceID: UUID
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
}

/// A recipient as fan-out needs them: where they are and what their badge says.
struct RecipientProfile: Sendable {
    let id: UUID
    let app: AppKind
    let locale: String
    let timeZone: String
    let badge: Int
}
