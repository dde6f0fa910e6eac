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

    /// How the provider's unanswered sends count for the dispatcher's gate (`PushChannel.gate`).
    func gate(of provider: PushProvider) -> ChannelGate

    /// Whether it can send through `provider` (fan-out writes email deliveries only then).
    func sends(_ provider: PushProvider) -> Bool
}

extension PushGateway {
    public func reloadIfChanged() -> [GatewayReload] { [] }

    public func gate(of provider: PushProvider) -> ChannelGate { ProviderGateway.gate(of: provider) }

    /// Every push provider; email only where configured (`ProviderGateway`).
    public func sends(_ provider: PushProvider) -> Bool { provider != .email }
}

/// Something a gateway read again.
public enum GatewayReload: Sendable, Equatable {
    /// A provider's credentials: its sends use the new ones from now on.
    case credentials(PushProvider)
    /// The extra CA file: every provider's new connections trust what it holds now.
    case certificateAuthorities
}

/// Every channel (`PushChannel`) as the environment configures it
/// (docs/operating/configuration.md). A channel that is not configured answers every send with
/// a configuration error that says what is missing, so its work stays queued and `herald
/// stats` shows why.
///
/// Built from the environment, it watches the files named there (each channel's credentials,
/// `HERALD_CA_FILE`): `reloadIfChanged()` reads a changed one again, so a rotated key or CA
/// needs no restart.
public final class ProviderGateway: PushGateway {
    /// Every channel Herald sends through, in the order the start line names them: adding a
    /// channel is adding its conformer here (docs/architecture.md, "Add a channel").
    public static let channelTypes: [any PushChannel.Type] = [FCMProvider.self, APNsProvider.self, WebPushProvider.self, EmailChannel.self]

    private static let byProvider = Dictionary(uniqueKeysWithValues: channelTypes.map { ($0.provider, $0) })

    private let channels: Mutex<[PushProvider: Result<any PushChannel, PushConfigurationError>]>
    /// The environment it was built from and its clients (nil: given channels, nothing to
    /// watch), and the stamps of the credential files as last read.
    private let environment: (variables: [String: String], http: ChannelHTTP)?
    private let stamps: Mutex<[PushProvider: FileStamp?]>
    public let http: HTTPClient

    /// A gateway of the channels given; a provider with none is not configured.
    public init(channels: [any PushChannel], http: HTTPClient) {
        var configured: [PushProvider: Result<any PushChannel, PushConfigurationError>] = [:]
        for channel in channels { configured[type(of: channel).provider] = .success(channel) }
        self.channels = Mutex(configured)
        self.environment = nil
        self.stamps = Mutex([:])
        self.http = http
    }

    private init(environment: [String: String], http: ChannelHTTP) {
        var stamps: [PushProvider: FileStamp?] = [:]
        var channels: [PushProvider: Result<any PushChannel, PushConfigurationError>] = [:]
        for type in Self.channelTypes {
            stamps[type.provider] = type.credentialsFile(in: environment).map { FileStamp(path: $0) }
            channels[type.provider] = Self.configure(type, environment, http)
        }
        self.channels = Mutex(channels)
        self.environment = (environment, http)
        self.stamps = Mutex(stamps)
        self.http = http.shared
    }

    private static func configure(
        _ type: any PushChannel.Type, _ environment: [String: String], _ http: ChannelHTTP
    ) -> Result<any PushChannel, PushConfigurationError> {
        func configured<Channel: PushChannel>(_ type: Channel.Type) -> Result<any PushChannel, PushConfigurationError> {
            type.configured(by: environment, http: http).map { $0 as any PushChannel }
        }
        return configured(type)
    }

    /// Reads each channel's variables (`GOOGLE_APPLICATION_CREDENTIALS`, `HERALD_FCM_ENDPOINT`,
    /// the `HERALD_APNS_*` and `HERALD_WEBPUSH_*` variables) and `HERALD_CA_FILE`.
    /// - Parameter webPushHTTP: the client whose every connection is checked
    ///   (`ChannelHTTP.checked`: a connection another request opened would not be); `http`
    ///   when nil, for tests that send to no browser.
    public static func fromEnvironment(_ environment: [String: String], http: HTTPClient, webPushHTTP: HTTPClient? = nil) -> ProviderGateway {
        ProviderGateway(environment: environment, http: ChannelHTTP(shared: http, checked: webPushHTTP))
    }

    /// How `provider`'s unanswered sends count for the gate.
    public static func gate(of provider: PushProvider) -> ChannelGate {
        byProvider[provider]?.gate ?? .oneEndpoint
    }

    private func channel(_ provider: PushProvider) -> Result<any PushChannel, PushConfigurationError> {
        channels.withLock { $0[provider] } ?? .failure(PushConfigurationError("\(provider.rawValue) is not configured on this gateway"))
    }

    /// Each channel, in order: what is missing or wrong when it cannot send (nil: configured),
    /// and what the start line says of it when it can.
    public var readiness: [(provider: PushProvider, problem: String?, note: String?)] {
        Self.channelTypes.map { type in
            switch channel(type.provider) {
            case .success(let channel): (type.provider, nil, channel.startNote)
            case .failure(let error): (type.provider, error.description, nil)
            }
        }
    }

    public func sends(_ provider: PushProvider) -> Bool { configurationError(for: provider) == nil }

    /// What is wrong with a provider's configuration, if anything.
    public func configurationError(for provider: PushProvider) -> PushConfigurationError? {
        if case .failure(let error) = channel(provider) { return error }
        return nil
    }

    public func reloadIfChanged() -> [GatewayReload] {
        var reloaded: [GatewayReload] = []
        if (try? http.reloadCAFile()) == true { reloaded.append(.certificateAuthorities) }
        guard let environment else { return reloaded }
        for type in Self.channelTypes {
            guard let path = type.credentialsFile(in: environment.variables) else { continue }
            let stamp = FileStamp(path: path)
            let changed = stamps.withLock { stamps in
                defer { stamps[type.provider] = stamp }
                return stamps[type.provider] != .some(stamp)
            }
            guard changed else { continue }
            let channel = Self.configure(type, environment.variables, environment.http)
            channels.withLock { $0[type.provider] = channel }
            reloaded.append(.credentials(type.provider))
        }
        return reloaded
    }

    public func send(_ notification: PushNotification, provider: PushProvider, app: AppKind, expiration: Date?) async throws -> ProviderAnswer {
        switch channel(provider) {
        case .success(let channel): try await channel.deliver(notification, app: app, expiration: expiration)
        case .failure(let error): ProviderAnswer(.configurationError(reason: error.description), httpStatus: nil)
        }
    }
}
