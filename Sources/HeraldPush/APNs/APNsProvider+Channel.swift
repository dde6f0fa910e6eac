import Foundation
import HeraldCore

/// The bundle ids of the two apps (`apns-topic`): `HERALD_APNS_TOPIC_MEMBER` and `_MANAGER`.
public struct APNsTopics: Sendable, Equatable {
    public let member: String
    public let manager: String

    public init(member: String, manager: String) {
        self.member = member
        self.manager = manager
    }

    public func topic(for app: AppKind) -> String {
        app == .manager ? manager : member
    }
}

/// APNs as a channel (`PushChannel`): `HERALD_APNS_KEY_FILE`, `_KEY_ID`, `_TEAM_ID`, the two
/// topics, and `HERALD_APNS_ENDPOINT` for another endpoint (the sandbox, the emulator).
extension APNsProvider: PushChannel {
    public static let provider = PushProvider.apns
    public static let gate = ChannelGate.oneEndpoint
    public static let payloadLimit = APNsRequest.maxBytes

    public static func outcome(of response: ProviderResponse, now: Date) -> DeliveryOutcome {
        APNsClassifier.classify(response, now: now)
    }

    public static func credentialsFile(in environment: [String: String]) -> String? {
        configuredValue("HERALD_APNS_KEY_FILE", in: environment)
    }

    public static func configured(by environment: [String: String], http: ChannelHTTP) -> Result<APNsProvider, PushConfigurationError> {
        guard let keyFile = credentialsFile(in: environment) else {
            return .failure(
                PushConfigurationError(
                    "APNs is not configured: set HERALD_APNS_KEY_FILE, HERALD_APNS_KEY_ID, HERALD_APNS_TEAM_ID and the topics"))
        }
        do {
            guard let member = configuredValue("HERALD_APNS_TOPIC_MEMBER", in: environment),
                let manager = configuredValue("HERALD_APNS_TOPIC_MANAGER", in: environment)
            else {
                throw PushConfigurationError("APNs needs HERALD_APNS_TOPIC_MEMBER and HERALD_APNS_TOPIC_MANAGER (the apps' bundle ids)")
            }
            let credentials = try APNsCredentials(
                keyFile: keyFile, keyID: configuredValue("HERALD_APNS_KEY_ID", in: environment) ?? "",
                teamID: configuredValue("HERALD_APNS_TEAM_ID", in: environment) ?? "")
            return .success(
                APNsProvider(
                    credentials: credentials, endpoint: configuredValue("HERALD_APNS_ENDPOINT", in: environment) ?? "https://api.push.apple.com",
                    http: http.shared, topics: APNsTopics(member: member, manager: manager)))
        } catch let error as PushConfigurationError {
            return .failure(error)
        } catch {
            return .failure(PushConfigurationError("cannot load the APNs key: \(error)"))
        }
    }

    /// To the app of `app`'s bundle id.
    public func deliver(_ notification: PushNotification, app: AppKind, expiration: Date?) async throws -> ProviderAnswer {
        guard let topics else {
            return ProviderAnswer(.configurationError(reason: "APNs has no topics: set HERALD_APNS_TOPIC_MEMBER and _MANAGER"), httpStatus: nil)
        }
        return try await deliver(notification, topic: topics.topic(for: app), expiration: expiration)
    }
}
