import Foundation
import HeraldCore

/// A tenant's webhook endpoint (docs/webhooks.md) as the API shows it: never its secret.
public struct WebhookEndpointRecord: Sendable, Codable, Equatable {
    public enum State: String, Sendable, Codable {
        case active, disabled
    }

    public let id: UUID
    public let url: String
    /// Subscription patterns, as given.
    public let events: [String]
    public let description: String?
    public let state: State
    public let disabledReason: String?
    public let disabledAt: Date?
    /// When the previous secret stops being signed with (24 h after a rotation).
    public let previousSecretUntil: Date?
    public let createdAt: Date
    public let updatedAt: Date
}

/// An endpoint and its secret, as the two answers that show it write it (create and
/// rotate-secret, in the API and the CLI's `--json`): the endpoint's fields and `secret`.
public struct WebhookEndpointWithSecret: Sendable, Encodable {
    public let endpoint: WebhookEndpointRecord
    public let secret: String

    public init(endpoint: WebhookEndpointRecord, secret: String) {
        self.endpoint = endpoint
        self.secret = secret
    }

    public func encode(to encoder: any Encoder) throws {
        try endpoint.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(secret, forKey: .secret)
    }

    enum Key: String, CodingKey { case secret }
}

/// An endpoint with its secrets, for signing (never leaves the server).
public struct WebhookTarget: Sendable, Equatable {
    public let tenantID: UUID
    public let id: UUID
    public let url: String
    public let secret: String
    /// The previous secret while it is still signed with.
    public let previousSecret: String?
}

/// One attempt to deliver one event to one endpoint.
public struct WebhookAttemptRecord: Sendable, Codable, Equatable {
    public let id: UUID
    public let webhookID: UUID
    public let messageID: UUID
    public let eventType: String
    public let attempt: Int
    /// The HTTP status the endpoint answered; nil when it did not answer.
    public let status: Int?
    public let error: String?
    /// The first 1 KiB of the answer.
    public let response: String?
    public let durationMs: Int
    public let at: Date

    enum CodingKeys: String, CodingKey {
        case id, eventType, attempt, status, error, response, durationMs, at
        case webhookID = "webhookId"
        case messageID = "messageId"
    }
}

/// A row of the durable feed as the webhook feeder reads it.
public struct WebhookFeedRow: Sendable {
    public enum Payload: Sendable {
        /// What a live frame reports too (or, with no audience, a timer's activity event).
        case live(LivePayload)
        /// A webhook-only event written in SQL: its type and its `data` object as JSON.
        case event(type: String, data: String)
    }

    public let position: Int64
    public let tenantID: UUID
    public let createdAt: Date
    public let payload: Payload
}

/// One event the feeder writes for the endpoints of its tenant that subscribe to it.
public struct WebhookMessageDraft: Sendable, Equatable {
    public let tenantID: UUID
    /// The event's id: the `webhook-id` every endpoint and every retry gets.
    public let id: UUID
    public let type: String
    /// The request body, exactly as it is signed.
    public let body: String
    public let createdAt: Date
    public let endpoints: [UUID]

    public init(tenantID: UUID, id: UUID, type: String, body: String, createdAt: Date, endpoints: [UUID]) {
        self.tenantID = tenantID
        self.id = id
        self.type = type
        self.body = body
        self.createdAt = createdAt
        self.endpoints = endpoints
    }
}

/// An active endpoint's subscription, as the feeder matches events against it.
public struct WebhookSubscription: Sendable, Equatable {
    public let tenantID: UUID
    public let endpointID: UUID
    public let patterns: [String]
    /// Events before it are not the endpoint's.
    public let createdAt: Date
}

/// A message leased to a sender.
public struct ClaimedWebhookMessage: Sendable, Equatable {
    public let target: WebhookTarget
    public let id: UUID
    public let type: String
    public let body: String
    /// This attempt's number (1 for the first).
    public let attempt: Int

    public var key: WebhookMessageKey { WebhookMessageKey(tenantID: target.tenantID, endpointID: target.id, id: id) }
}

/// Names one webhook message (its table's key).
public struct WebhookMessageKey: Sendable, Hashable {
    public let tenantID: UUID
    public let endpointID: UUID
    public let id: UUID
}

/// What an attempt came to, for the record.
public struct WebhookAttemptResult: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        case delivered
        case retry(at: Date)
        /// The endpoint is disabled for this reason; the message failed.
        case disable(reason: String)
    }

    public let message: ClaimedWebhookMessage
    public let outcome: Outcome
    public let httpStatus: Int?
    public let error: String?
    public let response: String?
    public let durationMs: Int
    public let at: Date

    public init(
        message: ClaimedWebhookMessage, outcome: Outcome, httpStatus: Int?, error: String?, response: String?, durationMs: Int, at: Date
    ) {
        self.message = message
        self.outcome = outcome
        self.httpStatus = httpStatus
        self.error = error
        self.response = response
        self.durationMs = durationMs
        self.at = at
    }
}
