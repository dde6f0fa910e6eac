import Foundation
import HeraldTemplates
import HeraldTestSupport
import Logging
import Synchronization
import Testing
import _CryptoExtras

@testable import HeraldEmulator
@testable import HeraldHTTP
@testable import HeraldPush

let quiet = Logger(label: "herald.test", factory: { _ in SwiftLogNoOpLogHandler() })

func notification(token: String, body: String = "Hi") -> PushNotification {
    PushNotification(
        token: token, message: RenderedMessage(title: "Alice Moreau", body: body),
        data: ["type": "new_message", "conversationID": "c-1", "messageID": "m-1", "senderID": "p-1", "isGroup": "false", "timestamp": "1"],
        badge: 1, sound: true, threadID: "c-1")
}

/// Sends `count` notifications at once (tokens `prefix-0`, `prefix-1`, …) and returns the
/// outcomes that were not a delivery.
func undeliveredSends(_ fcm: FCMProvider, count: Int, prefix: String, body: String = "Hi") async throws -> [DeliveryOutcome] {
    try await withThrowingTaskGroup(of: DeliveryOutcome.self) { group in
        for index in 0..<count { group.addTask { try await fcm.send(notification(token: "\(prefix)-\(index)", body: body)) } }
        var undelivered: [DeliveryOutcome] = []
        for try await outcome in group {
            if case .delivered = outcome { continue }
            undelivered.append(outcome)
        }
        return undelivered
    }
}

/// An FCM provider pointed at the emulator, with the service account the emulator wrote.
///
/// Its sends wait up to 300 s for an answer, not FCM's 10 s (`pushSendTimeout`): these tests
/// are about what is sent and how, and the in-process emulator shares two cores with the
/// whole suite (in CI, tens of sends of 3,000 and of 10,000 once waited longer than 10 s). A
/// send that is lost still fails, only later. Tests of timeouts give their requests their own.
func provider(_ emulator: Emulator, _ endpoints: Emulator.Endpoints, http: HTTPClient, sendTimeout: Duration = .seconds(300)) throws -> FCMProvider {
    let account = try ServiceAccount(json: emulator.serviceAccountJSON(tokenURI: endpoints.https + "/token"))
    return FCMProvider(account: account, endpoint: endpoints.https, http: http, sendTimeout: sendTimeout)
}

/// An FCM send without a valid access token: answered 401, after the emulator's injected
/// latency (a send held for as long as the test needs).
func unauthorizedSend(_ endpoints: Emulator.Endpoints, timeout: Duration = .seconds(30)) -> HTTPRequest {
    HTTPRequest(
        method: "POST", url: endpoints.https + "/v1/projects/herald-dev/messages:send", headers: [("authorization", "Bearer none")],
        body: Array(#"{"message": {"token": "a"}}"#.utf8), timeout: timeout)
}

/// A client that trusts the emulator's certificate authority (beside the system's). The CA
/// file is read when the client is made and removed right after (a test run left 31).
func client(_ emulator: Emulator, _ configuration: HTTPClient.Configuration = .init()) throws -> HTTPClient {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("emulator-ca-\(UUID().uuidString).pem")
    try emulator.certificates.caPEM.write(to: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: file) }
    var configuration = configuration
    configuration.extraCAFile = file.path
    return try HTTPClient(configuration: configuration, logger: quiet)
}

/// Load tests, one at a time: each drives thousands of sends through an in-process emulator,
/// and several at once on two cores (beside the rest of the suite) kept requests waiting past
/// their 30-second timeouts.
@Suite(.serialized) struct DeliveryTests {
    @Test func tenThousandSendsShareOneOrTwoConnections() async throws {
        try await LoadTests.oneAtATime {
            try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
                let http = try client(emulator, .init(maxInFlight: 200))
                defer { http.shutdown() }
                let fcm = try provider(emulator, endpoints, http: http)
                let undelivered = try await undeliveredSends(fcm, count: 10_000, prefix: "token")
                let messages = await emulator.messages()
                #expect(undelivered.isEmpty, "\(10_000 - undelivered.count) of 10,000 delivered; the rest: \(undelivered.prefix(3))")
                // Each accepted exactly once, all over HTTP/2, on one or two connections.
                #expect(messages.count == 10_000)
                #expect(Set(messages.map(\.token)).count == 10_000)
                #expect(messages.allSatisfy { $0.httpVersion == "2" })
                #expect(await fcm.tokens.fetches == 1)
                #expect(emulator.connectionCount <= 2, "the emulator saw \(emulator.connectionCount) connections")
                #expect(http.connectionsOpened <= 2)
            }
        }
    }

    /// libcurl's own queue of transfers waiting for a stream is not first come first served
    /// and charges the wait to the request's timeout; the client keeps the surplus itself.
    @Test func moreCallersThanStreamsWaitInTheClientNotInLibcurl() async throws {
        try await LoadTests.oneAtATime {
            try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
                let http = try client(emulator, .init(maxInFlight: 512, maxConnectionsPerHost: 2, maxStreamsPerConnection: 100))
                defer { http.shutdown() }
                let fcm = try provider(emulator, endpoints, http: http)
                let failures = try await withThrowingTaskGroup(of: DeliveryOutcome?.self) { group in
                    for index in 0..<3_000 {
                        group.addTask {
                            let outcome = try await fcm.send(notification(token: "t\(index)"))
                            if case .delivered = outcome { return nil }
                            return outcome
                        }
                    }
                    return try await group.reduce(into: [DeliveryOutcome]()) { if let outcome = $1 { $0.append(outcome) } }
                }
                #expect(failures.isEmpty, "\(failures.count) of 3,000 not delivered, e.g. \(failures.prefix(3))")
                #expect(await emulator.messages().count == 3_000)
                #expect(http.peakTransfers > 0)
                #expect(http.peakTransfers <= 200, "libcurl held \(http.peakTransfers) transfers for 2 connections × 100 streams")
            }
        }
    }

    /// A plain-HTTP endpoint (an egress gateway, a test double) works as well as HTTPS: the
    /// OAuth token and 200 sends on the same cleartext server, each sent once, none failed,
    /// whether it speaks only h2c or only HTTP/1.1.
    @Test(arguments: [\Emulator.Endpoints.http2, \Emulator.Endpoints.http1])
    func cleartextEndpointsCarryEverySendOnce(_ endpoint: KeyPath<Emulator.Endpoints, String> & Sendable) async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let base = endpoints[keyPath: endpoint]
            let http = try client(emulator, .init(maxInFlight: 256))
            defer { http.shutdown() }
            let account = try ServiceAccount(json: emulator.serviceAccountJSON(tokenURI: base + "/token"))
            let fcm = FCMProvider(account: account, endpoint: base, http: http)
            let failed = try await undeliveredSends(fcm, count: 200, prefix: "clear")
            #expect(failed.isEmpty, "\(failed.count) not delivered, e.g. \(failed.prefix(3))")
            let messages = await emulator.messages()
            #expect(messages.count == 200)
            #expect(Set(messages.map(\.token)).count == 200)
            let expected = endpoint == \Emulator.Endpoints.http2 ? "2" : "1.1"
            #expect(messages.allSatisfy { $0.httpVersion == expected })
            #expect(await fcm.tokens.fetches == 1)
            #expect(http.cleartextKnowledge(of: base) == (expected == "2" ? .h2c : .http1))
            if expected == "1.1" {
                // Keep-alive: connections are reused, not one per request.
                #expect(emulator.connectionCount <= 32, "the emulator saw \(emulator.connectionCount) connections")
            } else {
                // The HTTP/1.1 tries before the origin was known to speak h2c (at most as
                // many as run at once, 32), then streams on reused h2c connections.
                #expect(emulator.connectionCount < 100, "the emulator saw \(emulator.connectionCount) connections")
            }
        }
    }

    /// An `http://` origin known to speak h2c is not held to the 32 requests at a time of an
    /// HTTP/1.1 origin (one per connection): its requests are streams, as many at once as
    /// over TLS. With every answer 100 ms late, 200 sends are in flight together.
    @Test func anH2cOriginTakesAsManyRequestsAtOnceAsStreamsAllow() async throws {
        let slow = EmulatorConfiguration(faults: .init(latency: .milliseconds(100)))
        try await Emulator.withRunning(slow, logger: quiet) { emulator, endpoints in
            let http = try client(emulator, .init(maxInFlight: 256))
            defer { http.shutdown() }
            let account = try ServiceAccount(json: emulator.serviceAccountJSON(tokenURI: endpoints.http2 + "/token"))
            let fcm = FCMProvider(account: account, endpoint: endpoints.http2, http: http)
            // One send alone: the origin is learnt to speak h2c (after one HTTP/1.1 try).
            let first = try await fcm.send(notification(token: "first"))
            #expect({ if case .delivered = first { true } else { false } }(), "\(first)")
            #expect(http.cleartextKnowledge(of: endpoints.http2) == .h2c)
            let failed = try await undeliveredSends(fcm, count: 200, prefix: "wide")
            #expect(failed.isEmpty, "\(failed.count) not delivered, e.g. \(failed.prefix(3))")
            // Held to 32, the loops would have held at most 32 + the one HTTP/1.1 try.
            #expect(http.peakTransfers > 64, "at most \(http.peakTransfers) requests were in flight at once")
        }
    }

    /// How a cleartext origin's protocol is learnt: HTTP/1.1 first; h2c only after an answer
    /// that was not HTTP/1 at all; and once known, kept.
    @Test func aCleartextOriginSwitchesToH2cOnlyWhenItDidNotSpeakHTTP1() {
        var protocols = CleartextProtocols()
        let origin = "http://127.0.0.1:8788"
        #expect(protocols.protocolFor(origin) == .http1)
        let http09 = HTTPClientError(kind: .transfer, message: "Received HTTP/0.9 when not allowed", curlCode: 1)
        let timeout = HTTPClientError(kind: .timeout, message: "Timeout was reached", curlCode: 28)
        let refused = HTTPClientError(kind: .connect, message: "Couldn't connect to server", curlCode: 7)
        #expect(protocols.shouldTryH2c(origin, after: http09))
        #expect(!protocols.shouldTryH2c(origin, after: timeout))
        #expect(!protocols.shouldTryH2c(origin, after: refused))
        protocols.answered(origin, over: .h2c)
        #expect(protocols.protocolFor(origin) == .h2c)
        #expect(!protocols.shouldTryH2c(origin, after: http09))
        protocols.answered("http://gateway:80", over: .http1)
        #expect(protocols.protocolFor("http://gateway:80") == .http1)
        #expect(!protocols.shouldTryH2c("http://gateway:80", after: http09))
    }

    /// An OAuth token fetch goes ahead of the sends waiting for the same origin (and into slots
    /// kept for it): with 300 slow sends queued behind 10 streams it comes back while most of
    /// them still wait, instead of after all of them.
    @Test func aTokenFetchDoesNotWaitBehindQueuedSends() async throws {
        let slow = EmulatorConfiguration(faults: .init(latency: .milliseconds(100)))
        try await Emulator.withRunning(slow, logger: quiet) { emulator, endpoints in
            let http = try client(emulator, .init(maxInFlight: 300, maxConnectionsPerHost: 1, maxStreamsPerConnection: 10))
            defer { http.shutdown() }
            let account = try ServiceAccount(json: emulator.serviceAccountJSON(tokenURI: endpoints.https + "/token"))
            let sendURL = endpoints.https + "/v1/projects/herald-dev/messages:send"
            final class Count: Sendable { let value = Atomic<Int>(0) }
            let finished = Count()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<300 {
                    group.addTask {
                        _ = try await http.send(
                            HTTPRequest(method: "POST", url: sendURL, headers: [("authorization", "Bearer x")], body: Array("{}".utf8)))
                        finished.value.add(1, ordering: .relaxed)
                    }
                }
                // The first answers are back, so the line is full.
                while finished.value.load(ordering: .relaxed) == 0 { try await Task.sleep(for: .milliseconds(5)) }
                let token = try await FCMProvider.fetchToken(account: account, http: http, now: { Date() })
                let finishedBeforeToken = finished.value.load(ordering: .relaxed)
                #expect(!token.value.isEmpty)
                #expect(finishedBeforeToken < 150, "the token came back after \(finishedBeforeToken) of 300 queued sends")
                try await group.waitForAll()
            }
        }
    }

    /// What `herald emulator messages --json` prints: the token truncated, in the payload too.
    @Test func aListedMessageShowsItsTokenTruncated() {
        let token = "bob-phone-token-0123456789"
        let recorded = RecordedMessage(
            id: "1", provider: "fcm", token: token, title: "T", body: "B", payload: #"{"message":{"token":"\#(token)"}}"#, headers: [:],
            receivedAt: Date(), httpVersion: "2")
        let listed = recorded.redactingToken { $0.prefix(6) + "…" + $0.suffix(4) }
        #expect(listed.token == "bob-ph…6789")
        #expect(!listed.payload.contains(token) && listed.payload.contains("bob-ph…6789"))
    }

    @Test func originsAreSchemeHostAndPort() {
        #expect(HTTPClient.origin(of: "https://FCM.googleapis.com/v1/projects/p/messages:send") == "https://fcm.googleapis.com")
        #expect(HTTPClient.origin(of: "http://127.0.0.1:8080?x=1") == "http://127.0.0.1:8080")
        #expect(HTTPClient.origin(of: "https://api.push.apple.com:443/3/device/abc") == "https://api.push.apple.com:443")
        #expect(HTTPClient.origin(of: "not a url") == "not a url")
    }

    @Test func aThousandConcurrentSendsFetchOneAccessToken() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let fcm = try provider(emulator, endpoints, http: http)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<1000 { group.addTask { _ = try await fcm.send(notification(token: "t\(index)")) } }
                try await group.waitForAll()
            }
            #expect(await fcm.tokens.fetches == 1)
            #expect(await emulator.messages().count == 1000)
        }
    }

    @Test func a401RefreshesTheTokenOnceAndRetries() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let fcm = try provider(emulator, endpoints, http: http)
            guard case .delivered = try await fcm.send(notification(token: "first")) else {
                Issue.record("the first send failed")
                return
            }
            await emulator.revokeAccessTokens()
            let outcome = try await fcm.send(notification(token: "second"))
            guard case .delivered = outcome else {
                Issue.record("expected delivery after a refresh, got \(outcome)")
                return
            }
            #expect(await fcm.tokens.fetches == 2)
            #expect(await emulator.messages().map(\.token) == ["first", "second"])
        }
    }

    @Test func anAssertionSignedByAnotherKeyIsAConfigurationError() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            // Another key, same shape (emulators share one development key unless given theirs).
            let impostor = try Emulator(signingKey: try _RSA.Signing.PrivateKey(keySize: .bits2048), logger: quiet)
            let account = try ServiceAccount(json: impostor.serviceAccountJSON(tokenURI: endpoints.https + "/token"))
            let fcm = FCMProvider(account: account, endpoint: endpoints.https, http: http)
            let outcome = try await fcm.send(notification(token: "x"))
            guard case .configurationError(let reason) = outcome else {
                Issue.record("expected a configuration error, got \(outcome)")
                return
            }
            #expect(reason.contains("Invalid JWT Signature"))
            #expect(!reason.contains("PRIVATE KEY"))
            #expect(await emulator.messages().isEmpty)
        }
    }

    @Test func deadTokensAndInjectedFaultsAreClassified() async throws {
        var configuration = EmulatorConfiguration()
        configuration.faults.deadTokenPrefix = "dead-"
        try await Emulator.withRunning(configuration, logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let fcm = try provider(emulator, endpoints, http: http)
            #expect(try await fcm.send(notification(token: "dead-123")) == .deadToken(reason: "UNREGISTERED: Requested entity was not found."))
            await emulator.setFaults(.init(unavailableShare: 1, retryAfterSeconds: 7))
            #expect(
                try await fcm.send(notification(token: "ok"))
                    == .retry(after: .seconds(7), reason: "UNAVAILABLE: The service is currently unavailable."))
            await emulator.setFaults(.init(throttledShare: 1, retryAfterSeconds: 2))
            #expect(
                try await fcm.send(notification(token: "ok"))
                    == .retry(after: .seconds(60), reason: "QUOTA_EXCEEDED: Quota exceeded for quota metric 'Messages'."))
        }
    }

    @Test func aWaitingSendIsCancelledAndASlowOneTimesOut() async throws {
        var configuration = EmulatorConfiguration()
        // Far longer than the test: a send that is not really cancelled would end in a 200.
        configuration.faults.latency = .seconds(60)
        try await Emulator.withRunning(configuration, logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            // Any send waits out the injected latency before it is answered (here: 401, no token).
            let request = unauthorizedSend(endpoints)
            let waiting = Task { try await http.send(request) }
            try await Task.sleep(for: .milliseconds(200))
            waiting.cancel()
            await #expect(throws: CancellationError.self) { _ = try await waiting.value }

            var slow = request
            slow.timeout = .milliseconds(300)
            let error = await #expect(throws: HTTPClientError.self) { _ = try await http.send(slow) }
            #expect(error?.kind == .timeout)
            // The client still works afterwards.
            await emulator.setFaults(.init())
            #expect(try await http.send(request).status == 401)
        }
    }

    @Test func anUnreachableEndpointIsAConnectError() async throws {
        let http = try HTTPClient(configuration: .init(connectTimeout: .seconds(2)), logger: quiet)
        defer { http.shutdown() }
        let error = await #expect(throws: HTTPClientError.self) { _ = try await http.send(HTTPRequest(url: "http://127.0.0.1:1/")) }
        #expect(error?.kind == .connect)
    }
}

@Suite struct EmulatorChecksTests {
    /// A raw send with a valid access token, bypassing the provider's own encoding.
    func rawSend(_ body: String, _ emulator: Emulator, _ endpoints: Emulator.Endpoints, http: HTTPClient) async throws -> HTTPResponse {
        let account = try ServiceAccount(json: emulator.serviceAccountJSON(tokenURI: endpoints.https + "/token"))
        let fcm = FCMProvider(account: account, endpoint: endpoints.https, http: http)
        let token = try await fcm.tokens.token()
        return try await http.send(
            HTTPRequest(
                method: "POST", url: fcm.sendURL, headers: [("authorization", "Bearer \(token)"), ("content-type", "application/json")],
                body: Array(body.utf8)))
    }

    @Test(arguments: [
        (#"{"message": {"token": "a", "data": {"count": 3}}}"#, "message.data[0].value"),
        (#"{"message": {"token": "a", "topic": "news"}}"#, "exactly one of token, fid, topic or condition"),
        (#"{"message": {"token": "a", "fid": "cX3vT9qLRk2bYw8mN4pZa_"}}"#, "exactly one of token, fid, topic or condition"),
        (#"{"message": {"fid": "not an installation id"}}"#, "not a valid FID"),
        (#"{"message": {"notification": {"title": "x"}}}"#, "exactly one of token, fid, topic or condition"),
        (#"{"message": {"token": "a", "priority": "high"}}"#, "message.priority"),
        (#"{"message": {"token": "a", "notification": {"title": "x", "sound": "default"}}}"#, "message.notification.sound")
    ])
    func malformedMessagesAreRefusedLikeFCMDoes(body: String, expected: String) async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let response = try await rawSend(body, emulator, endpoints, http: http)
            #expect(response.status == 400)
            let text = String(decoding: response.body, as: UTF8.self)
            #expect(text.contains(expected), "\(text)")
            #expect(FCMClassifier.classify(ProviderResponse(status: response.status, body: response.body)) != .delivered(messageID: nil))
            #expect(await emulator.messages().isEmpty)
        }
    }

    @Test func anOversizedPayloadIsRefused() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let body = #"{"message": {"token": "a", "notification": {"title": "x", "body": "\#(String(repeating: "y", count: 5000))"}}}"#
            let response = try await rawSend(body, emulator, endpoints, http: http)
            #expect(response.status == 400)
            #expect(String(decoding: response.body, as: UTF8.self).contains("too big"))
        }
    }

    @Test func aSendWithoutAValidAccessTokenIs401() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let response = try await http.send(
                HTTPRequest(
                    method: "POST", url: endpoints.https + "/v1/projects/herald-dev/messages:send", headers: [("authorization", "Bearer forged")],
                    body: Array(#"{"message": {"token": "a"}}"#.utf8)))
            #expect(response.status == 401)
            #expect(
                FCMClassifier.classify(ProviderResponse(status: 401, body: response.body))
                    == .credentialsExpired(
                        reason: "UNAUTHENTICATED: Request had invalid authentication credentials. Expected OAuth 2 access token."))
        }
    }

    @Test func recordedMessagesAreListedOverHTTPAndCleared() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let fcm = try provider(emulator, endpoints, http: http)
            _ = try await fcm.send(notification(token: "listed", body: "Tom & Jerry <3"))
            let listing = try await http.send(HTTPRequest(url: endpoints.https + "/emulator/messages"))
            let messages = try JSONDecoder.emulator.decode([RecordedMessage].self, from: Data(listing.body))
            #expect(messages.map(\.token) == ["listed"])
            #expect(messages.first?.body == "Tom & Jerry <3")
            _ = try await http.send(HTTPRequest(method: "DELETE", url: endpoints.https + "/emulator/messages"))
            #expect(await emulator.messages().isEmpty)
        }
    }

    /// The HTTPS port also speaks HTTP/1.1 (ALPN http/1.1, or no ALPN at all), like Google's.
    @Test func theHTTPSPortAlsoSpeaksHTTP1() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator, .init(http1Only: true))
            defer { http.shutdown() }
            let fcm = try provider(emulator, endpoints, http: http)
            guard case .delivered = try await fcm.send(notification(token: "over-http1")) else {
                Issue.record("an HTTP/1.1 send was not delivered")
                return
            }
            let stats = try await http.send(HTTPRequest(url: endpoints.https + "/emulator/stats"))
            #expect(stats.status == 200 && stats.httpVersion == "1.1")
            #expect(await emulator.messages().map(\.httpVersion) == ["1.1"])
        }
    }
}
