/// Where a delivery (one notification to one device) stands: `deliveries.status`.
public enum DeliveryStatus: String, Sendable, Codable, CaseIterable {
    case queued, sending, sent
    case deadToken = "dead_token"
    case failed, expired, cancelled
    /// Sent twice, and neither send was answered (a timeout, a connection lost): the provider
    /// may have taken either, so it is not sent a third time (docs/notifications.md#delivery).
    case unanswered
}

/// What one attempt at a delivery came to: `delivery_attempts.outcome`.
public enum AttemptOutcome: String, Sendable, Codable, CaseIterable {
    case delivered, retry
    case deadToken = "dead_token"
    case badRequest = "bad_request"
    case configurationError = "configuration_error"
    case cancelled
    /// The request left and no answer came: the provider may have taken it.
    case unanswered
}

/// Whether fan-out queued a notification for devices: `notifications.status`. `cancelled`:
/// its activity had moved on before the event was fanned out (superseded).
public enum NotificationStatus: String, Sendable, Codable, CaseIterable {
    case queued
    case noDevice = "no_device"
    case suppressed, cancelled
    /// Gathered into a digest (its `digest_id`): pushed as part of it, not by itself.
    case digested
}
