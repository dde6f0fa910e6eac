import Foundation
import HeraldCore

/// Email as a channel (`PushChannel`, docs/notifications.md#email): a person's address is a
/// device of provider `email`; a notification becomes a message (`EmailComposer`) submitted to
/// the operator's relay (`SMTPClient`). The relay's replies are outcomes: 2xx sent (its reply,
/// with the queue id, kept as the message id), 4xx retried, 5xx failed (a third in a row
/// deactivates the address), an authentication refused a configuration error.
public struct EmailChannel: PushChannel {
    public static let provider = PushProvider.email
    /// One relay: when it does not answer, the worker holds email back (and probes) while
    /// pushes go on.
    public static let gate = ChannelGate.oneEndpoint
    /// The most bytes of a message (relays commonly take 10 MB; Herald's are a few KB).
    public static let payloadLimit = 1_000_000

    let settings: EmailSettings
    let client: SMTPClient

    public init(settings: EmailSettings) {
        self.settings = settings
        client = SMTPClient(settings.smtp)
    }

    public static func credentialsFile(in environment: [String: String]) -> String? {
        configuredValue("HERALD_SMTP_PASSWORD_FILE", in: environment)
    }

    public static func configured(by environment: [String: String], http: ChannelHTTP) -> Result<EmailChannel, PushConfigurationError> {
        EmailSettings.from(environment).map(EmailChannel.init(settings:))
    }

    public var startNote: String? { "to \(settings.description)" }

    /// The relay's reply as an outcome (`status` is the SMTP reply code).
    public static func outcome(of response: ProviderResponse, now: Date) -> DeliveryOutcome {
        let text = String(decoding: response.body, as: UTF8.self)
        switch response.status {
        case 200..<400: return .delivered(messageID: text.isEmpty ? nil : String(text.prefix(200)))
        case 530, 534, 535, 538: return .configurationError(reason: "the relay refused Herald's login: \(text)")
        case 400..<500: return .retry(after: nil, reason: "the relay answered \(text)")
        default: return .badRequest(reason: "the relay refused the message: \(text)")
        }
    }

    public func deliver(_ notification: PushNotification, app: AppKind, expiration: Date?) async throws -> ProviderAnswer {
        guard let recipient = notification.mail else {
            return ProviderAnswer(.badRequest(reason: "an email without its recipient's name and words"), httpStatus: nil)
        }
        let message: EmailMessage
        do {
            message = try EmailComposer.compose(notification, to: recipient, settings: settings, now: Date())
        } catch {
            return ProviderAnswer(.badRequest(reason: "the email templates failed: \(error)"), httpStatus: nil)
        }
        let wire = message.wire
        guard wire.utf8.count <= Self.payloadLimit else {
            return ProviderAnswer(.badRequest(reason: "the email is \(wire.utf8.count) bytes"), httpStatus: nil)
        }
        try Task.checkCancellation()
        switch await client.send(wire, from: settings.from.address, to: notification.token) {
        case .replied(let code, let text):
            return ProviderAnswer(Self.outcome(of: ProviderResponse(status: code, body: text), now: Date()), httpStatus: code)
        case .failed(let reason, let kind):
            switch kind {
            case .tlsRefused:
                return ProviderAnswer(
                    .configurationError(reason: "the relay offers no TLS (STARTTLS is required; HERALD_SMTP_ALLOW_PLAIN=1 allows plain): \(reason)"),
                    httpStatus: nil)
            case .unreachable:
                return ProviderAnswer(
                    .retry(after: nil, reason: "the relay could not be reached, or did not answer before the message: \(reason)"), httpStatus: nil)
            case .noAnswer: return ProviderAnswer(.unanswered(reason: "the relay did not answer: \(reason)"), httpStatus: nil)
            }
        }
    }
}
