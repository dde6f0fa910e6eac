import Foundation
import HeraldHTTP

/// Sends notifications straight to APNs over HTTP/2 (docs/notifications.md).
///
/// Every request carries the provider token from `APNsCredentials`; when APNs answers
/// ExpiredProviderToken the token is signed anew and the send retried once.
public final class APNsProvider: Sendable {
    public let credentials: APNsCredentials
    public let endpoint: String
    private let http: HTTPClient
    private let now: @Sendable () -> Date
    private let sendTimeout: Duration
    /// The apps' bundle ids, for `deliver(_:app:expiration:)` (nil: only `deliver(_:topic:)`).
    public let topics: APNsTopics?

    /// - Parameters:
    ///   - endpoint: `HERALD_APNS_ENDPOINT`; Apple's production host by default
    ///     (`https://api.sandbox.push.apple.com` for development builds of the apps).
    ///   - sendTimeout: how long a send waits for APNs' answer.
    public init(
        credentials: APNsCredentials, endpoint: String = "https://api.push.apple.com", http: HTTPClient,
        sendTimeout: Duration = pushSendTimeout, now: @escaping @Sendable () -> Date = { Date() }, topics: APNsTopics? = nil
    ) {
        self.topics = topics
        self.credentials = credentials
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.http = http
        self.sendTimeout = sendTimeout
        self.now = now
    }

    /// Sends one notification to the app whose bundle id is `topic`. Throws only
    /// `CancellationError`; everything else is an outcome.
    public func send(_ notification: PushNotification, topic: String, expiration: Date? = nil) async throws -> DeliveryOutcome {
        try await deliver(notification, topic: topic, expiration: expiration).outcome
    }

    /// `send`, with the HTTP status of APNs's last answer.
    public func deliver(_ notification: PushNotification, topic: String, expiration: Date? = nil) async throws -> ProviderAnswer {
        let request = APNsRequest(notification, topic: topic, expiration: expiration)
        for attempt in 0..<2 {
            let token: String
            do {
                token = try await credentials.providerToken()
            } catch {
                return ProviderAnswer(.configurationError(reason: "cannot sign an APNs provider token: \(error)"), httpStatus: nil)
            }
            var headers = request.headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
            headers.append((name: "authorization", value: "bearer \(token)"))
            let response: HTTPResponse
            do {
                response = try await http.send(
                    HTTPRequest(
                        method: "POST", url: endpoint + request.path, headers: headers, body: Array(request.body), timeout: sendTimeout))
            } catch let error as HTTPClientError {
                return ProviderAnswer(DeliveryOutcome.transport(error, what: "APNs"), httpStatus: nil)
            }
            let outcome = Self.outcome(
                of:
                    ProviderResponse(status: response.status, headers: response.headers, body: response.body), now: now())
            guard case .credentialsExpired(let reason) = outcome else { return ProviderAnswer(outcome, httpStatus: response.status) }
            await credentials.renew()
            if attempt == 1 {
                return ProviderAnswer(
                    .configurationError(reason: "APNs refused a freshly signed provider token: \(reason)"), httpStatus: response.status)
            }
        }
        return ProviderAnswer(.configurationError(reason: "APNs kept refusing the provider token"), httpStatus: nil)
    }
}
