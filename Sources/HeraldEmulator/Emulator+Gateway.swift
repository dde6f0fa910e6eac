import Crypto
import Foundation
import HeraldCore
import HeraldHTTP
import HeraldPush
import Logging

extension Emulator {
    /// FCM and APNs providers pointed at this running emulator, for the length of `body`:
    /// its CA trusted through a temporary file, its development service account (whose
    /// token endpoint is on `base` too), a fresh APNs key, and the demo apps' topics; and Web
    /// Push with a fresh VAPID key (`webPushKey`), allowed to reach the emulator's push service
    /// on loopback over plain HTTP.
    /// - Parameters:
    ///   - base: one of the emulator's endpoints (HTTPS, h2c or HTTP/1.1).
    ///   - sendTimeout: how long a send waits for its answer (tests of a provider that does not answer).
    ///   - email: a relay to send email to, in the clear (none: email is not configured).
    public func withGateway<Result>(
        base: String, maxInFlight: Int, sendTimeout: Duration = pushSendTimeout, email: EmulatorSMTP? = nil, logger: Logger,
        _ body: (ProviderGateway) async throws -> Result
    ) async throws -> Result {
        let caFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "herald-emulator-ca-\(getpid())-\(UUID().uuidString.prefix(8)).pem")
        try certificates.caPEM.write(to: caFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: caFile) }
        let http = try HTTPClient(configuration: .init(maxInFlight: maxInFlight, extraCAFile: caFile.path), logger: logger)
        defer { http.shutdown() }
        let account = try ServiceAccount(json: serviceAccountJSON(tokenURI: base + "/token"), source: "the emulator's account")
        let apnsKey = P256.Signing.PrivateKey()
        trustAPNsKey(apnsKey.publicKey, id: "EMULATOR01")
        let credentials = try APNsCredentials(pem: apnsKey.pemRepresentation, keyID: "EMULATOR01", teamID: "EMULATOR01")
        let webPushHTTP = try HTTPClient(configuration: .init(maxInFlight: maxInFlight, http1Only: true, engine: .libcurl), logger: logger)
        defer { webPushHTTP.shutdown() }
        let vapid = try VAPIDCredentials(pem: webPushKey.pem, subject: "mailto:operator@herald.test")
        var mail: [any PushChannel] = []
        if let email {
            mail.append(
                EmailChannel(
                    settings: EmailSettings(
                        smtp: SMTPClient.Settings(url: "smtp://127.0.0.1:\(email.port)", allowPlain: true, timeout: sendTimeout),
                        from: EmailMessage.Mailbox(address: "herald@herald.test", name: "Herald"), appURL: Self.demoAppURL,
                        publicURL: Self.demoPublicURL)))
        }
        let gateway = ProviderGateway(
            channels: mail + [
                FCMProvider(account: account, endpoint: base, http: http, sendTimeout: sendTimeout),
                APNsProvider(
                    credentials: credentials, endpoint: base, http: http, sendTimeout: sendTimeout,
                    topics: APNsTopics(member: "com.example.herald.member", manager: "com.example.herald.manager")),
                WebPushProvider(
                    credentials: vapid, policy: DestinationPolicy(.webPush, allowHTTP: true, allowPrivate: true), http: webPushHTTP,
                    sendTimeout: sendTimeout)
            ],
            http: http)
        return try await body(gateway)
    }

    /// Where the emulator's emails link to: the apps, and `herald serve` (unsubscribing).
    public static let demoAppURL = "https://app.herald.test"
    public static let demoPublicURL = "http://127.0.0.1:8080"
}
