import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTemplates

/// An outbox event a worker has locked for its fan-out transaction.
public struct ClaimedEvent: Sendable {
    public let tenantID: UUID
    public let id: UUID
    public let kind: String
    /// The event's snapshot, as JSON text, its recipients left out (an empty list).
    public let payload: String
    /// How many recipients the snapshot names; `nil` when it names them in a way this
    /// version cannot read.
    public let recipientCount: Int?
    /// The snapshot's recipients, in order, read apart from it, when there are no more than
    /// a part of them (a large event's are read part by part: decoding the 10,000 of a
    /// large group took 50-80 ms before its first part could start). `nil` for a large event,
    /// and when any of them cannot be read.
    public let recipients: [EventRecipient]?
    public let occurredAt: Date
}

/// A delivery a worker holds the lease on, with everything needed to send it.
public struct ClaimedDelivery: Sendable {
    public let tenantID: UUID
    public let id: UUID
    /// Part of the delivery's key (tenant, notification, id).
    public let notificationID: UUID
    public let deviceID: UUID
    public let provider: PushProvider
    public let app: AppKind
    /// Attempts including this one.
    public let attempt: Int
    public let firstAttemptAt: Date
    public let deadlineAt: Date
    /// The device's token, or its installation id (`address`).
    public let token: String
    public let address: DeviceAddress
    public let deviceActive: Bool
    public let content: NotificationContent
    public let eventAt: Date
    /// The database's clock at the claim.
    public let claimedAt: Date
    /// A browser's subscription (provider `webpush`): `token` is its endpoint.
    public var subscription: WebPushSubscription? = nil
    /// Its earlier attempts that left and were never answered: the provider may hold one,
    /// so one is all it gets again (docs/notifications.md#delivery).
    public var unansweredBefore = 0
    /// The lease it was taken under (one a claim per tenant: `delivery_leases`), which its
    /// acknowledgement names.
    public var leaseID: UUID
}

/// A claimed batch of one tenant's deliveries, leased to one worker (a row of
/// `delivery_leases`): removed with the outcome of its last delivery.
public struct DeliveryLease: Hashable, Sendable {
    public let tenantID: UUID
    public let id: UUID

    public init(tenantID: UUID, id: UUID) {
        self.tenantID = tenantID
        self.id = id
    }
}

/// What became of one attempt, as the worker acknowledges it.
public struct Acknowledgement: Sendable {
    public typealias Status = DeliveryStatus
    public typealias Outcome = AttemptOutcome

    public let tenantID: UUID
    public let deliveryID: UUID
    public let notificationID: UUID
    public let deviceID: UUID
    public let provider: PushProvider
    public let attempt: Int
    /// The lease the delivery was sent under (`ClaimedDelivery.leaseID`): only its holder's
    /// outcome counts.
    public let leaseID: UUID
    public let status: Status
    public let outcome: Outcome
    /// When the delivery is due again (status `queued`).
    public let nextAttemptAt: Date?
    public let httpStatus: Int?
    public let messageID: String?
    public let error: String?
    public let startedAt: Date
    public let finishedAt: Date
    /// Whether the attempt counts towards the delivery's attempts (and backoff): not when
    /// the trouble was this worker's configuration or an endpoint that was down.
    public var spent = true
    /// Whether anything was sent: a delivery held back unsent leaves no attempt in history.
    public var attempted = true
    /// The attempt's id in history, in its delivery's millisecond (so in its partition):
    /// chosen once, so that writing the acknowledgement again records the attempt once.
    /// Left out, each write chooses one.
    public var attemptID: UUID? = nil

    public init(
        tenantID: UUID, deliveryID: UUID, notificationID: UUID, deviceID: UUID, provider: PushProvider, attempt: Int, leaseID: UUID,
        status: Status,
        outcome: Outcome, nextAttemptAt: Date?, httpStatus: Int?, messageID: String?, error: String?, startedAt: Date, finishedAt: Date,
        spent: Bool = true, attempted: Bool = true, attemptID: UUID? = nil
    ) {
        self.tenantID = tenantID
        self.deliveryID = deliveryID
        self.notificationID = notificationID
        self.deviceID = deviceID
        self.provider = provider
        self.attempt = attempt
        self.leaseID = leaseID
        self.status = status
        self.outcome = outcome
        self.nextAttemptAt = nextAttemptAt
        self.httpStatus = httpStatus
        self.messageID = messageID
        self.error = error
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.spent = spent
        self.attempted = attempted
        self.attemptID = attemptID
    }
}

/// One notification to write during fan-out.
public struct NotificationDraft: Sendable {
    public let eventID: UUID
    public let kind: EventKind
    public let recipientID: UUID
    public let app: AppKind
    public let teamID: UUID?
    public let activityID: UUID?
    public let conversationID: UUID?
    public let content: NotificationContent
    public let eventAt: Date
    /// Set when the recipient must not be pushed (for example, they are viewing the
    /// conversation): the notification is recorded as `suppressed` with this reason.
    public let suppressedReason: String?
    /// What fan-out decided (no_device and superseded are found as it writes).
    public var decision: NotificationDecision = .send
    /// Quiet hours: the deliveries wait until then.
    public var deferredUntil: Date? = nil
    /// Why it waits, in the recipient's words and clock.
    public var deferredReason: String? = nil
    /// Quiet hours: a later push of the same conversation counts this one; it gets no delivery.
    public var summarizedLater = false
    /// Gathered into a digest (`decision == .digest`): which, and what its words need.
    public var digest: DigestDraft? = nil
    /// Whether it goes by email too (`EmailReach`; never unless the worker can send email).
    public var email: EmailReach = .never
    /// The name written as the notification's kind: the event's, or `digest` for a digest.
    public var kindName: String

    public init(
        eventID: UUID, kind: EventKind, recipientID: UUID, app: AppKind, teamID: UUID?, activityID: UUID?, conversationID: UUID?,
        content: NotificationContent, eventAt: Date, suppressedReason: String?
    ) {
        self.eventID = eventID
        self.kind = kind
        self.recipientID = recipientID
        self.app = app
        self.teamID = teamID
        self.activityID = activityID
        self.conversationID = conversationID
        self.content = content
        self.eventAt = eventAt
        self.suppressedReason = suppressedReason
        self.kindName = kind.rawValue
    }
}

/// A notification fan-out gathers into a digest (docs/notifications.md): where it goes, and what
/// the digest will say of it. `DeliveryQueue.gather` finds (or opens) the digest.
public struct DigestDraft: Sendable {
    /// The team (activity events) or conversation (chat) whose digest it joins.
    public let scopeID: UUID
    /// The team's or conversation's name, the digest's title.
    public let scopeName: String
    public let item: TemplateVariables.DigestItem
    /// The recipient's window and clock.
    public let window: DigestWindow
    public let timeZone: String
    /// The digest it joined (set by `gather`; nil when the open app showed it).
    public var digestID: UUID? = nil

    public init(scopeID: UUID, scopeName: String, item: TemplateVariables.DigestItem, window: DigestWindow, timeZone: String) {
        self.scopeID = scopeID
        self.scopeName = scopeName
        self.item = item
        self.window = window
        self.timeZone = timeZone
    }
}

/// A recipient as fan-out needs them: where they are and what their badge says.
public struct RecipientProfile: Sendable {
    public let id: UUID
    public let app: AppKind
    public let locale: String
    public let timeZone: String
    public let badge: Int
    public var preferences = NotificationPreferences()
    public var quietHours: QuietHours? = nil
    /// Asked only of a P0's assignee and manager: whether they have a Live Activity token
    /// (push-to-start or update) on this app. Without one, fan-out writes nothing for it.
    public var followsLiveActivities = false
    /// How long their digest gathers.
    public var digestWindow = DigestWindow.default
    /// The channels they chose on this app, by event (none: `push`).
    public var channels: [EventKind: NotificationChannel] = [:]
    /// Their digest goes by email instead of a push (docs/notifications.md#digests-by-email).
    public var digestByEmail = false

    /// What the per-recipient decision (`DeliveryDecision`) needs of them.
    public var recipient: DeliveryDecision.Recipient {
        DeliveryDecision.Recipient(app: app, timeZone: timeZone, preferences: preferences, quietHours: quietHours)
    }
}

/// A participant's state at fan-out time.
public struct ParticipantState: Sendable {
    public let muted: Bool
    public let viewing: Bool
    /// Messages of this conversation that quiet hours hold back for them now (asked only
    /// for people with quiet hours).
    public var deferred = 0
    /// Their setting for this conversation, if any (wins over chat.message's).
    public var mode: PushMode? = nil
}
