import Foundation
import HeraldCore
import HeraldHTTP
import Synchronization

/// Where the dispatcher hands a notification to a provider. The real one is
/// `ProviderGateway`; tests of the dispatcher's decisions may use their own.
/// How long a send waits for the provider's answer before it counts as a transient failure
/// (retried). A provider that hangs then holds a worker's send slots for at most this long,
/// so sending resumes within it once the provider answers again; FCM and APNs answer in well
/// under a second when they are well.
public let pushSendTimeout: Duration = .seconds(10)

public protocol PushGateway: Sendable {
    /// Sends one notification; never throws for provider or network trouble (those are
    /// outcomes), only for cancellation.
    func send(_ notification: PushNotification, provider: PushProvider, app: AppKind, expiration: Date?) async throws -> ProviderAnswer

    /// Rereads credentials and CA files that changed since they were read.
    /// - Returns: what was reloaded (empty when nothing changed).
    func reloadIfChanged() -> [GatewayReload]
}

extension PushGateway {
    public func reloadIfChanged() -> [GatewayReload] { [] }
}

/// Something a gateway read again.
public enum GatewayReload: Sendable, Equatable {
    /// A provider's credentials: its sends use the new ones from now on.
    case credentials(PushProvider)
    /// The extra CA file: every provider's new connections trust what it holds now.
    case certificateAuthorities
}

/// FCM and APNs as the environment configures them (docs/operating/configuration.md). A provider that is not
/// configured answers every send with a configuration error that says what is missing, so
/// its work stays queued and `herald stats` shows why.
///
/// Built from the environment, it watches the files named there (the service account, the
/// APNs key, `HERALD_CA_FILE`): `reloadIfChanged()` reads a changed one again, so a rotated
/// key or CA needs no restart.
public final class ProviderGateway: PushGateway {
    typealias APNsSetup = (APNsProvider, member: String, manager: String)

    private struct Providers {
        var fcm: Result<FCMProvider, PushConfigurationError>
        var apns: Result<APNsSetup, PushConfigurationError>
        var webPush: Result<WebPushProvider, PushConfigurationError>
    }

    private let providers: Mutex<Providers>
    /// The environment it was built from (nil: given providers, nothing to watch) and the
    /// stamps of the credential files as last read.
    private let environment: [String: String]?
    private let stamps: Mutex<[PushProvider: FileStamp?]>
    public let http: HTTPClient
    /// Web Push's own client: every connection it makes is checked (`DestinationPolicy`).
    public let webPushHTTP: HTTPClient?

    public init(
        fcm: Result<FCMProvider, PushConfigurationError>,
        apns: Result<(APNsProvider, member: String, manager: String), PushConfigurationError>,
        webPush: Result<WebPushProvider, PushConfigurationError> = .failure(notConfiguredWebPush), http: HTTPClient
    ) {
        self.providers = Mutex(Providers(fcm: fcm, apns: apns, webPush: webPush))
        self.environment = nil
        self.stamps = Mutex([:])
        self.http = http
        self.webPushHTTP = nil
    }

    private init(environment: [String: String], http: HTTPClient, webPushHTTP: HTTPClient) {
        var stamps: [PushProvider: FileStamp?] = [:]
        for provider in PushProvider.allCases {
            stamps[provider] = Self.credentialsFile(of: provider, in: environment).map { FileStamp(path: $0) }
        }
        self.providers = Mutex(
            Providers(
                fcm: Self.fcm(environment, http: http), apns: Self.apns(environment, http: http),
                webPush: Self.webPush(environment, http: webPushHTTP)))
        self.environment = environment
        self.stamps = Mutex(stamps)
        self.http = http
        self.webPushHTTP = webPushHTTP
    }

    /// Each provider and, when it cannot send, what is missing or wrong (nil: configured).
    public var readiness: [(provider: PushProvider, problem: String?)] {
        let current = providers.withLock { $0 }
        func problem<Value>(_ result: Result<Value, PushConfigurationError>) -> String? {
            if case .failure(let error) = result { return error.description }
            return nil
        }
        return [(.fcm, problem(current.fcm)), (.apns, problem(current.apns)), (.webpush, problem(current.webPush))]
    }

    /// The public key pages subscribe with (`GET /v1/webpush/key`); nil when Web Push is not configured.
    public var webPushPublicKey: String? {
        if case .success(let provider) = providers.withLock({ $0.webPush }) { return provider.credentials.publicKey }
        return nil
    }

    /// Reads `GOOGLE_APPLICATION_CREDENTIALS`, `HERALD_FCM_ENDPOINT`, the `HERALD_APNS_*` and
    /// `HERALD_WEBPUSH_*` variables and `HERALD_CA_FILE`.
    /// - Parameter webPushHTTP: Web Push's own client (`DestinationPolicy` checks each of its
    ///   connections, and a connection another request opened would not be checked); `http`
    ///   when nil, for tests that send to no browser.
    public static func fromEnvironment(_ environment: [String: String], http: HTTPClient, webPushHTTP: HTTPClient? = nil) -> ProviderGateway {
        ProviderGateway(environment: environment, http: http, webPushHTTP: webPushHTTP ?? http)
    }

    /// What a gateway without Web Push answers.
    public static let notConfiguredWebPush = PushConfigurationError(
        "Web Push is not configured: set HERALD_WEBPUSH_KEY_FILE (herald webpush keys --out FILE makes one) and HERALD_WEBPUSH_SUBJECT")

    private static func value(_ name: String, in environment: [String: String]) -> String? {
        environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    private static func credentialsFile(of provider: PushProvider, in environment: [String: String]) -> String? {
        switch provider {
        case .fcm: value("GOOGLE_APPLICATION_CREDENTIALS", in: environment)
        case .apns: value("HERALD_APNS_KEY_FILE", in: environment)
        case .webpush: value("HERALD_WEBPUSH_KEY_FILE", in: environment)
        }
    }

    private static func webPush(_ environment: [String: String], http: HTTPClient) -> Result<WebPushProvider, PushConfigurationError> {
        webPushSetup(environment).map { WebPushProvider(credentials: $0.credentials, policy: $0.policy, http: http) }
    }

    /// Web Push as `HERALD_WEBPUSH_KEY_FILE`, `HERALD_WEBPUSH_SUBJECT` and the
    /// `HERALD_WEBPUSH_ALLOW_*` variables configure it (the API answers the key from it too).
    public static func webPushSetup(_ environment: [String: String]) -> Result<
        (credentials: VAPIDCredentials, policy: DestinationPolicy), PushConfigurationError
    > {
        guard let keyFile = value("HERALD_WEBPUSH_KEY_FILE", in: environment) else { return .failure(notConfiguredWebPush) }
        do {
            guard let subject = value("HERALD_WEBPUSH_SUBJECT", in: environment) else {
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

    private static func fcm(_ environment: [String: String], http: HTTPClient) -> Result<FCMProvider, PushConfigurationError> {
        guard let path = value("GOOGLE_APPLICATION_CREDENTIALS", in: environment) else {
            return .failure(PushConfigurationError("FCM is not configured: set GOOGLE_APPLICATION_CREDENTIALS to the service account JSON"))
        }
        do {
            let account = try ServiceAccount.load(path: path)
            let endpoint = value("HERALD_FCM_ENDPOINT", in: environment) ?? "https://fcm.googleapis.com"
            return .success(FCMProvider(account: account, endpoint: endpoint, http: http))
        } catch let error as PushConfigurationError {
            return .failure(error)
        } catch {
            return .failure(PushConfigurationError("cannot load the FCM service account: \(error)"))
        }
    }

    private static func apns(_ environment: [String: String], http: HTTPClient) -> Result<APNsSetup, PushConfigurationError> {
        guard let keyFile = value("HERALD_APNS_KEY_FILE", in: environment) else {
            return .failure(
                PushConfigurationError(
                    "APNs is not configured: set HERALD_APNS_KEY_FILE, HERALD_APNS_KEY_ID, HERALD_APNS_TEAM_ID and the topics"))
        }
        do {
            guard let member = value("HERALD_APNS_TOPIC_MEMBER", in: environment),
                let manager = value("HERALD_APNS_TOPIC_MANAGER", in: environment)
            else {
                throw PushConfigurationError("APNs needs HERALD_APNS_TOPIC_MEMBER and HERALD_APNS_TOPIC_MANAGER (the apps' bundle ids)")
            }
            let credentials = try APNsCredentials(
                keyFile: keyFile, keyID: value("HERALD_APNS_KEY_ID", in: environment) ?? "",
                teamID: value("HERALD_APNS_TEAM_ID", in: environment) ?? "")
            let provider = APNsProvider(
                credentials: credentials, endpoint: value("HERALD_APNS_ENDPOINT", in: environment) ?? "https://api.push.apple.com",
                http: http)
            return .success((provider, member, manager))
        } catch let error as PushConfigurationError {
            return .failure(error)
        } catch {
            return .failure(PushConfigurationError("cannot load the APNs key: \(error)"))
        }
    }

    /// What is wrong with a provider's configuration, if anything.
    public func configurationError(for provider: PushProvider) -> PushConfigurationError? {
        providers.withLock { providers in
            switch provider {
            case .fcm: if case .failure(let error) = providers.fcm { return error }
            case .apns: if case .failure(let error) = providers.apns { return error }
            case .webpush: if case .failure(let error) = providers.webPush { return error }
            }
            return nil
        }
    }

    public func reloadIfChanged() -> [GatewayReload] {
        var reloaded: [GatewayReload] = []
        if (try? http.reloadCAFile()) == true { reloaded.append(.certificateAuthorities) }
        guard let environment else { return reloaded }
        for provider in PushProvider.allCases {
            guard let path = Self.credentialsFile(of: provider, in: environment) else { continue }
            let stamp = FileStamp(path: path)
            let changed = stamps.withLock { stamps in
                defer { stamps[provider] = stamp }
                return stamps[provider] != .some(stamp)
            }
            guard changed else { continue }
            switch provider {
            case .fcm:
                let fcm = Self.fcm(environment, http: http)
                providers.withLock { $0.fcm = fcm }
            case .apns:
                let apns = Self.apns(environment, http: http)
                providers.withLock { $0.apns = apns }
            case .webpush:
                guard let webPushHTTP else { continue }
                let webPush = Self.webPush(environment, http: webPushHTTP)
                providers.withLock { $0.webPush = webPush }
            }
            reloaded.append(.credentials(provider))
        }
        return reloaded
    }

    public func send(_ notification: PushNotification, provider: PushProvider, app: AppKind, expiration: Date?) async throws -> ProviderAnswer {
        switch provider {
        case .fcm:
            switch providers.withLock({ $0.fcm }) {
            case .success(let fcm): return try await fcm.deliver(notification)
            case .failure(let error): return ProviderAnswer(.configurationError(reason: error.description), httpStatus: nil)
            }
        case .apns:
            switch providers.withLock({ $0.apns }) {
            case .success(let (apns, member, manager)):
                return try await apns.deliver(notification, topic: app == .manager ? manager : member, expiration: expiration)
            case .failure(let error):
                return ProviderAnswer(.configurationError(reason: error.description), httpStatus: nil)
            }
        case .webpush:
            switch providers.withLock({ $0.webPush }) {
            case .success(let webPush): return try await webPush.deliver(notification, expiration: expiration)
            case .failure(let error): return ProviderAnswer(.configurationError(reason: error.description), httpStatus: nil)
            }
        }
    }
}
