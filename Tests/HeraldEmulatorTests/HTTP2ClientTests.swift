import Foundation
import HeraldTestSupport
import Testing

@testable import HeraldEmulator
@testable import HeraldHTTP
@testable import HeraldPush

/// The `https://` path through both engines, against the real emulator over real TLS: what
/// each sends and receives, and how the nghttp2 client meets a server without HTTP/2, a
/// certificate it must not trust, and a server that went away.
@Suite struct HTTP2ClientTests {
    @Test(arguments: HTTPClient.Configuration.Engine.allCases)
    func eachEngineCarriesARequestAndItsAnswer(_ engine: HTTPClient.Configuration.Engine) async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator, .init(engine: engine))
            defer { http.shutdown() }
            let fcm = try provider(emulator, endpoints, http: http)
            let token = try await fcm.tokens.token()
            let body = #"{"message": {"token": "engine-\#(engine)", "data": {"a": "1"}, "notification": {"title": "T", "body": "B"}}}"#
            let answer = try await http.send(
                HTTPRequest(
                    method: "post", url: fcm.sendURL,
                    headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json"), ("Connection", "keep-alive")],
                    body: Array(body.utf8)))
            #expect(answer.status == 200)
            #expect(answer.httpVersion == "2")
            #expect(answer.headers["content-type"]?.hasPrefix("application/json") == true)
            #expect(String(decoding: answer.body, as: UTF8.self).contains("projects/herald-dev/messages/"))
            let messages = await emulator.messages()
            #expect(messages.map(\.token) == ["engine-\(engine)"])
            #expect(messages.map(\.httpVersion) == ["2"])

            // A query, no body, and a path the emulator does not know.
            let stats = try await http.send(HTTPRequest(url: endpoints.https + "/emulator/stats?unused=1#fragment"))
            #expect(stats.status == 200)
            let missing = try await http.send(HTTPRequest(url: endpoints.https + "/no/such/path"))
            #expect(missing.status == 404)
            #expect(http.connectionsOpened == 1)
        }
    }

    /// A send whose client gave up while the emulator held it (injected latency) is still
    /// accepted, as by a provider that got the request; its late answer goes nowhere, and the
    /// same connection carries the next send.
    @Test func aSendTheClientGaveUpOnIsStillAcceptedAndTheConnectionServesOn() async throws {
        // The emulator holds each send 3 s; the client gives up after 1 s. The connection is
        // open (and the token fetched) before, so that second is only the send's: a 50 ms
        // window that also held the TLS handshake gave up before the send left, on a loaded
        // machine.
        let slow = EmulatorConfiguration(faults: .init(latency: .seconds(3)))
        try await Emulator.withRunning(slow, logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let fcm = try provider(emulator, endpoints, http: http)
            let token = try await fcm.tokens.token()
            #expect(try await http.send(HTTPRequest(url: endpoints.https + "/emulator/stats", timeout: .seconds(60))).status == 200)
            func send(_ device: String, timeout: Duration) async throws -> HTTPResponse {
                try await http.send(
                    HTTPRequest(
                        method: "post", url: fcm.sendURL,
                        headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
                        body: Array(#"{"message": {"token": "\#(device)", "notification": {"title": "T", "body": "B"}}}"#.utf8),
                        timeout: timeout))
            }
            await #expect(throws: HTTPClientError.self) { _ = try await send("given-up", timeout: .seconds(1)) }
            let next = try await send("next", timeout: .seconds(60))
            #expect(next.status == 200)
            // The given-up send is recorded when its hold ends, before the next one's does.
            #expect(Set(await emulator.messages().map(\.token)) == ["given-up", "next"])
            #expect(http.connectionsOpened == 1)
        }
    }

    @Test func aServerWithoutHTTP2IsAnsweredOverHTTP1() async throws {
        var configuration = EmulatorConfiguration()
        configuration.httpsOffersHTTP2 = false
        try await Emulator.withRunning(configuration, logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let fcm = try provider(emulator, endpoints, http: http)
            for index in 0..<3 {
                guard case .delivered = try await fcm.send(notification(token: "old-gateway-\(index)")) else {
                    Issue.record("send \(index) was not delivered")
                    return
                }
            }
            let messages = await emulator.messages()
            #expect(messages.count == 3)
            #expect(messages.allSatisfy { $0.httpVersion == "1.1" })
        }
    }

    @Test(arguments: HTTPClient.Configuration.Engine.allCases)
    func aCertificateFromAnUntrustedAuthorityIsRefused(_ engine: HTTPClient.Configuration.Engine) async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            // No extra CA file: the emulator's own authority is not among the system's.
            let http = try HTTPClient(configuration: .init(engine: engine), logger: quiet)
            defer { http.shutdown() }
            let error = await #expect(throws: HTTPClientError.self) {
                _ = try await http.send(HTTPRequest(url: endpoints.https + "/emulator/stats"))
            }
            #expect(error?.kind == .tls)
            #expect(error?.message.contains("certificate") == true, "\(String(describing: error))")
            #expect(await emulator.messages().isEmpty)
        }
    }

    /// The emulator stops and another starts on the same port with a new certificate
    /// authority: the client notices the old connection is gone (the stopping emulator
    /// closes it after its 10-second grace), trusts the new authority once the CA file is
    /// reread, and sends on a new connection.
    @Test func aServerThatWentAwayIsReachedAgainOnANewConnection() async throws {
        let caFile = FileManager.default.temporaryDirectory.appendingPathComponent("restart-ca-\(UUID().uuidString).pem")
        defer { try? FileManager.default.removeItem(at: caFile) }
        let (http, port) = try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            try emulator.certificates.caPEM.write(to: caFile, atomically: true, encoding: .utf8)
            let http = try HTTPClient(configuration: .init(extraCAFile: caFile.path), logger: quiet)
            #expect(try await http.send(HTTPRequest(url: endpoints.https + "/emulator/stats")).status == 200)
            return (http, try #require(URLComponents(string: endpoints.https)?.port))
        }
        defer { http.shutdown() }
        var configuration = EmulatorConfiguration()
        configuration.httpsPort = port
        try await Emulator.withRunning(configuration, logger: quiet) { emulator, endpoints in
            try emulator.certificates.caPEM.write(to: caFile, atomically: true, encoding: .utf8)
            #expect(try http.reloadCAFile())
            let answer = try await http.send(HTTPRequest(url: endpoints.https + "/emulator/stats"))
            #expect(answer.status == 200 && answer.httpVersion == "2")
            #expect(http.connectionsOpened == 2)
            http.shutdown()  // before this emulator stops, so that it has no connection to wait for
        }
    }

    /// The path to the server goes silent without a reset: the request on it times out, the
    /// PING sent then goes unanswered, and after `probeTimeout` the connection is dropped, so
    /// that the next request goes out on a new connection instead of timing out too.
    @Test func aConnectionThatWentSilentIsDroppedAfterAnUnansweredPing() async throws {
        try await FreezingRelay.inFrontOfAnEmulator { relay, http, base async throws in
            let stats = base + "/emulator/stats"
            #expect(try await http.send(HTTPRequest(url: stats)).status == 200)

            relay.freeze()
            let error = await #expect(throws: HTTPClientError.self) {
                _ = try await http.send(HTTPRequest(url: stats, timeout: .milliseconds(300)))
            }
            #expect(error?.kind == .timeout)
            // The drop comes within a check of the loop (at most a second when it is idle).
            try await Task.sleep(for: .nanoseconds(H2Loop.probeTimeout) + .seconds(3))
            let answer = try await http.send(HTTPRequest(url: stats, timeout: .seconds(5)))
            #expect(answer.status == 200)
            #expect(http.connectionsOpened == 2)
        }
    }

    /// A request body waits for the server's connection window, and nothing comes from the
    /// server: after a second the client sends a PING (a server that merely held back its
    /// WINDOW_UPDATE answers it and sends what it held), and when that goes unanswered too
    /// the connection is dropped after `probeTimeout`, long before the request's own timeout.
    @Test func aBodyStuckOnTheServersWindowGetsAPingAndThenADrop() async throws {
        try await FreezingRelay.inFrontOfAnEmulator { relay, http, base async throws in
            #expect(try await http.send(HTTPRequest(url: base + "/emulator/stats")).status == 200)

            relay.holdAnswers()
            let started = ContinuousClock.now
            let body = [UInt8](repeating: UInt8(ascii: "x"), count: 4 << 20)  // beyond any window the emulator grants
            let error = await #expect(throws: HTTPClientError.self) {
                _ = try await http.send(HTTPRequest(method: "POST", url: base + "/no/such/path", body: body, timeout: .seconds(60)))
            }
            let waited = ContinuousClock.now - started
            #expect(error?.message.contains("after a PING") == true, "\(String(describing: error))")
            // Not dropped before the probe had its time; dropped by the probe (the message
            // says so), not by the request's own 60 s timeout. No upper bound on the wall
            // clock beyond that: on a loaded machine the loop may run late (23 s was seen).
            let probe = Duration.nanoseconds(H2Loop.probeTimeout)
            let delay = Duration.nanoseconds(H2Loop.stallProbeDelay)
            #expect(waited >= probe + delay && waited < .seconds(60), "\(waited)")
        }
    }

    /// An answer of several megabytes (the message list after a long bench) arrives whole:
    /// the emulator used to close such a stream while its end still sat in its buffers,
    /// which reached the client as a reset.
    @Test(arguments: HTTPClient.Configuration.Engine.allCases)
    func aLargeAnswerArrivesWhole(_ engine: HTTPClient.Configuration.Engine) async throws {
        // 3,000 sends with long bodies: a load test, one at a time with the others.
        try await LoadTests.oneAtATime {
            try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
                let http = try client(emulator, .init(engine: engine))
                defer { http.shutdown() }
                let fcm = try provider(emulator, endpoints, http: http)
                let text = String(repeating: "A long body, so that the list is long. ", count: 90)
                let failed = try await undeliveredSends(fcm, count: 3_000, prefix: "large", body: text)
                #expect(failed.isEmpty, "\(failed.count) not delivered, e.g. \(failed.prefix(3))")
                let listing = try await http.send(HTTPRequest(url: endpoints.https + "/emulator/messages", timeout: .seconds(60)))
                #expect(listing.status == 200)
                #expect(listing.body.count > 16 << 20, "the list is \(listing.body.count) bytes")
                let messages = try JSONDecoder.emulator.decode([RecordedMessage].self, from: Data(listing.body))
                #expect(messages.count == 3_000)
            }
        }
    }

    /// A caller already cancelled when it sends: its cancellation reaches the loop before, or
    /// with, its request, and the request never leaves (against an emulator that would hold
    /// any send for a minute, a request that left would end in a timeout instead).
    @Test func aSendCancelledBeforeItIsQueuedNeverLeaves() async throws {
        var configuration = EmulatorConfiguration()
        configuration.faults.latency = .seconds(60)
        try await Emulator.withRunning(configuration, logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let request = unauthorizedSend(endpoints, timeout: .seconds(20))
            let outcomes = await withTaskGroup(of: String.self) { group in
                for _ in 0..<300 {
                    group.addTask {
                        withUnsafeCurrentTask { $0?.cancel() }
                        do {
                            _ = try await http.send(request)
                            return "answered"
                        } catch is CancellationError {
                            return "cancelled"
                        } catch {
                            return "\(error)"
                        }
                    }
                }
                return await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
            }
            #expect(outcomes == ["cancelled": 300])
        }
    }
}
