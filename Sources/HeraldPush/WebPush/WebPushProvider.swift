import Foundation
import HeraldCore
import HeraldHTTP

/// Sends Web Push messages straight to the push service each subscription names (docs/apps.md#web-push-browsers-and-installed-web-apps):
/// the body encrypted for the browser (`WebPushEncryption`), signed for the service's origin
/// (`VAPIDCredentials`), on an HTTP client whose every connection is checked against the
/// destination policy: the endpoint was chosen by whoever registered the device.
public final class WebPushProvider: Sendable {
    public let credentials: VAPIDCredentials
    public let policy: DestinationPolicy
    private let http: HTTPClient
    private let now: @Sendable () -> Date
    private let sendTimeout: Duration

    /// - Parameters:
    ///   - http: a client of Web Push's own: its connections are all checked ones.
    ///   - sendTimeout: how long a send waits for the push service's answer.
    public init(
        credentials: VAPIDCredentials, policy: DestinationPolicy, http: HTTPClient, sendTimeout: Duration = pushSendTimeout,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.credentials = credentials
        self.policy = policy
        self.http = http
        self.sendTimeout = sendTimeout
        self.now = now
    }

    /// Sends one notification to the subscription it carries. Throws only `CancellationError`.
    public func deliver(_ notification: PushNotification, expiration: Date?) async throws -> ProviderAnswer {
        guard let subscription = notification.subscription else {
            return ProviderAnswer(.badRequest(reason: "the device has no Web Push subscription keys"), httpStatus: nil)
        }
        // The policy may be stricter than when the subscription was registered.
        do {
            _ = try policy.url(subscription.endpoint)
        } catch {
            return ProviderAnswer(.badRequest(reason: "the endpoint is refused now: \(error)"), httpStatus: nil)
        }
        let message = WebPushMessage(notification, expiration: expiration, now: now())
        let body: [UInt8]
        do {
            body = try WebPushEncryption.encrypt(message.body, to: subscription)
        } catch {
            return ProviderAnswer(.badRequest(reason: error.description), httpStatus: nil)
        }
        let origin = subscription.origin
        for attempt in 0..<2 {
            let authorization: String
            do {
                authorization = try credentials.authorization(for: origin)
            } catch {
                return ProviderAnswer(.configurationError(reason: "\(error)"), httpStatus: nil)
            }
            var request = HTTPRequest(
                method: "POST", url: subscription.endpoint, headers: message.headers + [("authorization", authorization)], body: body,
                timeout: sendTimeout)
            request.connectGuard = policy.connectGuard
            request.maxResponseBytes = 1_024
            let response: HTTPResponse
            do {
                response = try await http.send(request)
            } catch let error as HTTPClientError {
                if error.kind == .refused {
                    return ProviderAnswer(.badRequest(reason: "the endpoint is refused at connect time: \(error.message)"), httpStatus: nil)
                }
                return ProviderAnswer(DeliveryOutcome.transport(error, what: "the push service \(origin)"), httpStatus: nil)
            }
            let outcome = Self.outcome(
                of:
                    ProviderResponse(status: response.status, headers: response.headers, body: response.body), now: now())
            guard case .credentialsExpired(let reason) = outcome else { return ProviderAnswer(outcome, httpStatus: response.status) }
            credentials.forget(origin)
            if attempt == 1 {
                return ProviderAnswer(
                    .configurationError(reason: "the push service \(origin) refused a freshly signed VAPID token: \(reason)"),
                    httpStatus: response.status)
            }
        }
        return ProviderAnswer(.configurationError(reason: "the push service kept refusing the VAPID token"), httpStatus: nil)
    }
}
