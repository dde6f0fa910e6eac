import Foundation
import HeraldCore

/// FCM as a channel (`PushChannel`): `GOOGLE_APPLICATION_CREDENTIALS` names the service
/// account, `HERALD_FCM_ENDPOINT` another endpoint (the emulator's).
extension FCMProvider: PushChannel {
    public static let provider = PushProvider.fcm
    public static let gate = ChannelGate.oneEndpoint
    public static let payloadLimit = FCMMessage.maxBytes

    public static func outcome(of response: ProviderResponse, now: Date) -> DeliveryOutcome {
        FCMClassifier.classify(response, now: now)
    }

    public static func credentialsFile(in environment: [String: String]) -> String? {
        configuredValue("GOOGLE_APPLICATION_CREDENTIALS", in: environment)
    }

    public static func configured(by environment: [String: String], http: ChannelHTTP) -> Result<FCMProvider, PushConfigurationError> {
        guard let path = credentialsFile(in: environment) else {
            return .failure(PushConfigurationError("FCM is not configured: set GOOGLE_APPLICATION_CREDENTIALS to the service account JSON"))
        }
        do {
            let account = try ServiceAccount.load(path: path)
            let endpoint = configuredValue("HERALD_FCM_ENDPOINT", in: environment) ?? "https://fcm.googleapis.com"
            return .success(FCMProvider(account: account, endpoint: endpoint, http: http.shared))
        } catch let error as PushConfigurationError {
            return .failure(error)
        } catch {
            return .failure(PushConfigurationError("cannot load the FCM service account: \(error)"))
        }
    }

    /// The same for both apps: the token names the app's Firebase registration.
    public func deliver(_ notification: PushNotification, app: AppKind, expiration: Date?) async throws -> ProviderAnswer {
        try await deliver(notification)
    }
}
