/// Where a delivery (one notification to one device) stands: `deliveries.status`.
public enum DeliveryStatus: String, Sendable, Codable, CaseIterable {
    case queued, sending, sent
    case deadToken = "dead_token"
    case failed, expired, cancelled
}

/// What one attempt at a delivery came to: `delivery_attempts.outcome`.
public enum AttemptOutcome: String, Sendable, Codable, CaseIterable {
    case delivered, retry
    case deadToken = "dead_token"
    case badRequest = "bad_request"
    case configurationError = "configuration_error"
    case cancelled
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
