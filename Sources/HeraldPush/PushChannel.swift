import Foundation
import HeraldCore
import HeraldHTTP

/// One provider a push reaches a device through (docs/architecture.md, "Add a channel"). A
/// conformer owns everything that differs between providers: how it is configured, its
/// request and its size limit (each request made to fit it, `PayloadFit`), the mapping of its
/// answers onto `DeliveryOutcome`, how its failures count for the dispatcher's gate, and what
/// the worker's start line says of it. Routing chose the device (and so the channel); the
/// dispatcher, settlement and `ProviderGateway` ask the channel and never name a provider.
public protocol PushChannel: Sendable {
    /// The provider it sends to (the value devices are registered with).
    static var provider: PushProvider { get }
    /// How a send that got no answer counts for the dispatcher's gate.
    static var gate: ChannelGate { get }
    /// The most bytes of its final request (or payload) the provider takes.
    static var payloadLimit: Int { get }
    /// What the provider's answer means for the delivery (its classifier).
    static func outcome(of response: ProviderResponse, now: Date) -> DeliveryOutcome
    /// The credentials file the environment names, watched for a change (nil: none named).
    static func credentialsFile(in environment: [String: String]) -> String?
    /// The channel as the environment configures it, or one line saying what is missing or wrong.
    static func configured(by environment: [String: String], http: ChannelHTTP) -> Result<Self, PushConfigurationError>
    /// What the worker's start line says of it once configured (beyond "configured"), if anything.
    var startNote: String? { get }
    /// Sends one notification for an app of `app`'s. Never throws for provider or network
    /// trouble (those are outcomes), only `CancellationError`.
    func deliver(_ notification: PushNotification, app: AppKind, expiration: Date?) async throws -> ProviderAnswer
}

extension PushChannel {
    public var startNote: String? { nil }
}

/// How a channel's unanswered sends count for the dispatcher's gate (`SendGate`).
public enum ChannelGate: Sendable, Equatable {
    /// Every send goes to the provider's one endpoint: when it does not answer at all, the
    /// worker holds the channel back (and probes it) rather than spend every delivery's attempts.
    case oneEndpoint
    /// Each device names its own endpoint (a browser's push service): one that does not answer
    /// holds back only its own deliveries, by their backoff, never every device's.
    case perDevice
}

/// The HTTP clients a channel may send with.
public struct ChannelHTTP: Sendable {
    /// The client shared by the providers with fixed endpoints.
    public let shared: HTTPClient
    /// A client whose every connection is checked (`DestinationPolicy`), for endpoints that
    /// whoever registered a device chose.
    public let checked: HTTPClient

    public init(shared: HTTPClient, checked: HTTPClient? = nil) {
        self.shared = shared
        self.checked = checked ?? shared
    }
}

/// A non-empty variable of the environment.
func configuredValue(_ name: String, in environment: [String: String]) -> String? {
    environment[name].flatMap { $0.isEmpty ? nil : $0 }
}
