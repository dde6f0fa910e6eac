import Foundation
import HeraldCore
import HeraldHTTP
import HeraldPush

/// Where the dispatcher hands a notification to a provider. The real one is
/// `ProviderGateway`; tests of the dispatcher's decisions may use their own.
public protocol PushGateway: Sendable {
    /// Sends one notification; never throws for provider or network trouble (those are
    /// outcomes), only for cancellation.
    func send(_ notification: PushNotification, provider: PushProvider, app: AppKind, expiration: Date?) async throws -> ProviderAnswer
}

/// FCM and APNs as the environment configures them (DESIGN.md §8). A provider that is not
/// configured answers every send with a configuration error that says what is missing, so
/// its work stays queued and `herald stats` shows why.
public final class ProviderGateway: PushGateway {
    private let fcm: Result<FCMProvider, PushConfigurationError>
    private let apns: Result<(APNsProvider, member: String, manager: String), PushConfigurationError>
    public let http: HTTPClient

    public init(
        fcm: Result<FCMProvider, PushConfigurationError>,
        apns: Result<(APNsProvider, member: String, manager: String), PushConfigurationError>, http: HTTPClient
    ) {
        self.fcm = fcm
        self.apns = apns
        self.http = http
    }

    /// Reads `GOOGLE_APPLICATION_CREDENTIALS`, `HERALD_FCM_ENDPOINT`, the `HERALD_APNS_*`
    /// variables and `HERALD_CA_FILE`.
    public static func fromEnvironment(
        _ environment: [String: String], http: HTTPClient
    ) -> ProviderGateway {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let fcm: Result<FCMProvider, PushConfigurationError>
        if let path = value("GOOGLE_APPLICATION_CREDENTIALS") {
            do {
                let account = try ServiceAccount.load(path: path)
                fcm = .success(FCMProvider(account: account, endpoint: value("HERALD_FCM_ENDPOINT") ?? "https://fcm.googleapis.com", http: http))
            } catch let error as PushConfigurationError {
                fcm = .failure(error)
            } catch {
                fcm = .failure(PushConfigurationError("cannot load the FCM service account: \(error)"))
            }
        } else {
            fcm = .failure(PushConfigurationError("FCM is not configured: set GOOGLE_APPLICATION_CREDENTIALS to the service account JSON"))
        }
        let apns: Result<(APNsProvider, member: String, manager: String), PushConfigurationError>
        if let keyFile = value("HERALD_APNS_KEY_FILE") {
            do {
                guard let member = value("HERALD_APNS_TOPIC_MEMBER"), let manager = value("HERALD_APNS_TOPIC_MANAGER") else {
                    throw PushConfigurationError("APNs needs HERALD_APNS_TOPIC_MEMBER and HERALD_APNS_TOPIC_MANAGER (the apps' bundle ids)")
                }
                let credentials = try APNsCredentials(
                    keyFile: keyFile, keyID: value("HERALD_APNS_KEY_ID") ?? "", teamID: value("HERALD_APNS_TEAM_ID") ?? "")
                let provider = APNsProvider(
                    credentials: credentials, endpoint: value("HERALD_APNS_ENDPOINT") ?? "https://api.push.apple.com", http: http)
                apns = .success((provider, member, manager))
            } catch let error as PushConfigurationError {
                apns = .failure(error)
            } catch {
                apns = .failure(PushConfigurationError("cannot load the APNs key: \(error)"))
            }
        } else {
            apns = .failure(PushConfigurationError("APNs is not configured: set HERALD_APNS_KEY_FILE, HERALD_APNS_KEY_ID, HERALD_APNS_TEAM_ID and the topics"))
        }
        return ProviderGateway(fcm: fcm, apns: apns, http: http)
    }

    /// What is wrong with a provider's configuration, if anything.
    public func configurationError(for provider: PushProvider) -> PushConfigurationError? {
        switch provider {
        case .fcm: if case .failure(let error) = fcm { return error }
        case .apns: if case .failure(let error) = apns { return error }
        }
        return nil
    }

    public func send(_ notification: PushNotification, provider: PushProvider, app: AppKind, expiration: Date?) async throws -> ProviderAnswer {
        switch provider {
        case .fcm:
            switch fcm {
            case .success(let fcm): return try await fcm.deliver(notification)
            case .failure(let error): return ProviderAnswer(.configurationError(reason: error.description), httpStatus: nil)
            }
        case .apns:
            switch apns {
            case .success(let (apns, member, manager)):
                return try await apns.deliver(notification, topic: app == .manager ? manager : member, expiration: expiration)
            case .failure(let error):
                return ProviderAnswer(.configurationError(reason: error.description), httpStatus: nil)
            }
        }
    }
}
