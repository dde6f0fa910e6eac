import Foundation
import HeraldCore

/// Web Push as a channel (`PushChannel`): `HERALD_WEBPUSH_KEY_FILE`, `HERALD_WEBPUSH_SUBJECT`
/// and the `HERALD_WEBPUSH_ALLOW_*` variables; each subscription names its own push service.
extension WebPushProvider: PushChannel {
    public static let provider = PushProvider.webpush
    public static let gate = ChannelGate.perDevice
    public static let payloadLimit = WebPushEncryption.maxPlaintext

    public static func outcome(of response: ProviderResponse, now: Date) -> DeliveryOutcome {
        WebPushClassifier.classify(response, now: now)
    }

    public static func credentialsFile(in environment: [String: String]) -> String? {
        configuredValue("HERALD_WEBPUSH_KEY_FILE", in: environment)
    }

    /// On the checked client: every push service was chosen by whoever registered the browser.
    public static func configured(by environment: [String: String], http: ChannelHTTP) -> Result<WebPushProvider, PushConfigurationError> {
        setup(environment).map { WebPushProvider(credentials: $0.credentials, policy: $0.policy, http: http.checked) }
    }

    /// What a worker without Web Push answers.
    public static let notConfigured = PushConfigurationError(
        "Web Push is not configured: set HERALD_WEBPUSH_KEY_FILE (herald webpush keys --out FILE makes one) and HERALD_WEBPUSH_SUBJECT")

    /// The key and the destination policy the environment configures (`herald serve` answers
    /// the public key from it too).
    public static func setup(_ environment: [String: String]) -> Result<
        (credentials: VAPIDCredentials, policy: DestinationPolicy), PushConfigurationError
    > {
        guard let keyFile = credentialsFile(in: environment) else { return .failure(notConfigured) }
        do {
            guard let subject = configuredValue("HERALD_WEBPUSH_SUBJECT", in: environment) else {
                throw PushConfigurationError("Web Push needs HERALD_WEBPUSH_SUBJECT: a mailto: or https: URL push services can reach you at")
            }
            let policy: DestinationPolicy
            do {
                policy = try DestinationPolicy(.webPush, environment: environment)
            } catch {
                throw PushConfigurationError("\(error)")
            }
            return .success((try VAPIDCredentials(keyFile: keyFile, subject: subject), policy))
        } catch let error as PushConfigurationError {
            return .failure(error)
        } catch {
            return .failure(PushConfigurationError("cannot load the Web Push key: \(error)"))
        }
    }

    /// Pages subscribe with the public key: said at start, where operators look.
    public var startNote: String? { "pages subscribe with the public key \(credentials.publicKey)" }

    /// To the push service the subscription names, whichever app it is.
    public func deliver(_ notification: PushNotification, app: AppKind, expiration: Date?) async throws -> ProviderAnswer {
        try await deliver(notification, expiration: expiration)
    }
}
