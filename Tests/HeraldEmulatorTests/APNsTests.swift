import Crypto
import Foundation
import HeraldEmulator
import HeraldHTTP
import HeraldPush
import Synchronization
import Testing

@Suite struct APNsTests {
    /// A clock that reads two hours ago until `catchUp()`.
    final class LaggingClock: Sendable {
        private let lag = Mutex<TimeInterval>(7200)
        func now() -> Date { Date().addingTimeInterval(-lag.withLock { $0 }) }
        func catchUp() { lag.withLock { $0 = 0 } }
    }

    @Test func aNotificationReachesTheAPNsEndpointWithAppleHeaders() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let credentials = try APNsCredentials(pem: P256.Signing.PrivateKey().pemRepresentation, keyID: "KEY1234567", teamID: "TEAM123456")
            let apns = APNsProvider(credentials: credentials, endpoint: endpoints.https, http: http)
            let outcome = try await apns.send(notification(token: "a1b2c3d4e5f6"), topic: "com.example.herald.member")
            guard case .delivered(let id) = outcome else {
                Issue.record("expected delivery, got \(outcome)")
                return
            }
            #expect(id != nil)
            let recorded = try #require(await emulator.messages().first)
            #expect(recorded.provider == "apns")
            #expect(recorded.headers["apns-topic"] == "com.example.herald.member")
            #expect(recorded.headers["apns-push-type"] == "alert")
            #expect(recorded.title == "Alice Moreau")
            #expect(try await apns.send(notification(token: "dead-a1b2c3d4"), topic: "t") == .deadToken(reason: "Unregistered"))
        }
    }

    @Test func anExpiredProviderTokenIsRenewedOnceAndTheSendRetried() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let clock = LaggingClock()
            let credentials = try APNsCredentials(
                pem: P256.Signing.PrivateKey().pemRepresentation, keyID: "KEY1234567", teamID: "TEAM123456", now: { clock.now() })
            let apns = APNsProvider(credentials: credentials, endpoint: endpoints.https, http: http)
            // Signed two hours ago and never renewed: APNs says ExpiredProviderToken twice.
            guard case .configurationError = try await apns.send(notification(token: "a1b2c3d4e5f6"), topic: "t") else {
                Issue.record("a token APNs keeps refusing is a configuration error")
                return
            }
            // A cached token APNs finds too old (a lifetime set too long): renewed once, then delivered.
            let later = LaggingClock()
            let reused = try APNsCredentials(
                pem: P256.Signing.PrivateKey().pemRepresentation, keyID: "KEY1234567", teamID: "TEAM123456", lifetime: .seconds(3 * 3600),
                now: { later.now() })
            let first = try await reused.providerToken()
            later.catchUp()
            #expect(try await reused.providerToken() == first, "still cached")
            guard
                case .delivered = try await APNsProvider(credentials: reused, endpoint: endpoints.https, http: http).send(
                    notification(token: "a1b2c3d4e5f6"), topic: "t")
            else {
                Issue.record("expected delivery after renewing the provider token")
                return
            }
            #expect(try await reused.providerToken() != first, "renewed")
            #expect(await emulator.messages().count == 1)
        }
    }

    /// The emulator checks the signature of a provider token whose key it was told of, with
    /// swift-crypto rather than Herald's signer: signed by another key under the same key id,
    /// APNs's answer is InvalidProviderToken, and nothing is delivered.
    @Test func aProviderTokenSignedByAnotherKeyIsRefused() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let key = P256.Signing.PrivateKey()
            emulator.trustAPNsKey(key.publicKey, id: "KEY1234567")
            let impostor = try APNsCredentials(pem: P256.Signing.PrivateKey().pemRepresentation, keyID: "KEY1234567", teamID: "TEAM123456")
            let refused = try await APNsProvider(credentials: impostor, endpoint: endpoints.https, http: http)
                .send(notification(token: "a1b2c3d4e5f6"), topic: "t")
            guard case .configurationError(let reason) = refused else {
                Issue.record("a token the key did not sign must be refused, got \(refused)")
                return
            }
            #expect(reason.contains("InvalidProviderToken"), "\(reason)")
            let genuine = try APNsCredentials(pem: key.pemRepresentation, keyID: "KEY1234567", teamID: "TEAM123456")
            guard
                case .delivered = try await APNsProvider(credentials: genuine, endpoint: endpoints.https, http: http)
                    .send(notification(token: "a1b2c3d4e5f6"), topic: "t")
            else {
                Issue.record("the key's own token must be accepted")
                return
            }
            #expect(await emulator.messages().count == 1)
        }
    }
}
