import CoreMetrics
import Foundation
import HeraldHTTP

/// Sends notifications through FCM HTTP v1 (docs/notifications.md).
///
/// The OAuth access token comes from the service account's JWT-bearer grant, is shared by
/// every send, refreshed five minutes before it expires, and refreshed once more (with one
/// retry of the send) when FCM answers 401.
public final class FCMProvider: Sendable {
    public let account: ServiceAccount
    public let sendURL: String
    private let http: HTTPClient
    private let now: @Sendable () -> Date
    private let sendTimeout: Duration
    /// Exposed for diagnostics: how many token fetches were made.
    public let tokens: AccessTokenCache

    /// - Parameters:
    ///   - endpoint: FCM's base URL (`HERALD_FCM_ENDPOINT`, default `https://fcm.googleapis.com`).
    ///   - sendTimeout: how long a send waits for FCM's answer once on its way (not while it
    ///     waits for a stream); `pushSendTimeout` everywhere but in load tests, where the
    ///     emulator shares two cores with the rest of the suite.
    public init(
        account: ServiceAccount, endpoint: String = "https://fcm.googleapis.com", http: HTTPClient, now: @escaping @Sendable () -> Date = { Date() },
        sendTimeout: Duration = pushSendTimeout
    ) {
        self.account = account
        self.http = http
        self.now = now
        self.sendTimeout = sendTimeout
        let base = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.sendURL = "\(base)/v1/projects/\(account.projectID)/messages:send"
        let refreshes = Counter(label: "herald_access_token_refreshes_total", dimensions: [("provider", "fcm")])
        self.tokens = AccessTokenCache(now: now) { [account, http, now] in
            refreshes.increment()
            return try await Self.fetchToken(account: account, http: http, now: now)
        }
    }

    /// Sends one notification and says what became of it. Never throws for provider or
    /// network trouble: those are outcomes. Throws only `CancellationError`.
    public func send(_ notification: PushNotification) async throws -> DeliveryOutcome {
        try await deliver(notification).outcome
    }

    /// `send`, with the HTTP status of FCM's last answer.
    public func deliver(_ notification: PushNotification) async throws -> ProviderAnswer {
        let body = FCMMessage(notification).body
        for attempt in 0..<2 {
            let token: String
            do {
                token = try await tokens.token()
            } catch let error as PushConfigurationError {
                return ProviderAnswer(.configurationError(reason: error.description), httpStatus: nil)
            } catch let error as HTTPClientError {
                return ProviderAnswer(DeliveryOutcome.transport(error, what: "the OAuth token endpoint", isThePush: false), httpStatus: nil)
            }
            let request = HTTPRequest(
                method: "POST", url: sendURL,
                headers: [("authorization", "Bearer \(token)"), ("content-type", "application/json; charset=UTF-8")], body: body,
                timeout: sendTimeout)
            let response: HTTPResponse
            do {
                response = try await http.send(request)
            } catch let error as HTTPClientError {
                return ProviderAnswer(DeliveryOutcome.transport(error, what: "FCM"), httpStatus: nil)
            }
            let outcome = Self.outcome(
                of:
                    ProviderResponse(status: response.status, headers: response.headers, body: response.body), now: now())
            guard case .credentialsExpired(let reason) = outcome else { return ProviderAnswer(outcome, httpStatus: response.status) }
            await tokens.invalidate(token)
            if attempt == 1 {
                return ProviderAnswer(
                    .configurationError(reason: "FCM refused a freshly issued access token: \(reason)"), httpStatus: response.status)
            }
        }
        return ProviderAnswer(.configurationError(reason: "FCM kept refusing the access token"), httpStatus: nil)
    }

    /// The JWT-bearer grant: POST the signed assertion to the account's `token_uri`.
    static func fetchToken(account: ServiceAccount, http: HTTPClient, now: @Sendable () -> Date) async throws -> AccessToken {
        let issued = now()
        let request = HTTPRequest(
            method: "POST", url: account.tokenURI, headers: [("content-type", "application/x-www-form-urlencoded")],
            body: Array(try account.tokenRequestBody(issuedAt: issued).utf8), timeout: .seconds(20), urgent: true)
        let response = try await http.send(request)
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        guard response.status == 200, let token = object?["access_token"] as? String, !token.isEmpty else {
            let reason = (object?["error_description"] as? String) ?? (object?["error"] as? String) ?? "HTTP \(response.status)"
            if (400..<500).contains(response.status) {
                throw PushConfigurationError("the token endpoint \(account.tokenURI) refused the service account's assertion: \(reason)")
            }
            throw HTTPClientError(kind: .transfer, message: "the token endpoint answered \(response.status): \(reason)")
        }
        let lifetime = (object?["expires_in"] as? Int) ?? 3600
        return AccessToken(value: token, expiresAt: issued.addingTimeInterval(TimeInterval(lifetime)))
    }
}
