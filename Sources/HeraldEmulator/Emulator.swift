import Crypto
import Foundation
import HTTPTypes
import HeraldPush
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization
import _CryptoExtras

/// Stands in for FCM, Google's OAuth token endpoint and APNs, on loopback, over h2c and
/// HTTP/1.1. It checks requests the way the real services do, records what it accepts, and
/// injects faults on request. `herald emulator` runs it; tests and benchmarks run it in
/// process.
public final class Emulator: Sendable {
    /// Where a running emulator listens.
    public struct Endpoints: Sendable, Equatable {
        /// `https://127.0.0.1:PORT`, HTTP/2 (or HTTP/1.1) over TLS chosen by ALPN, as FCM and
        /// APNs serve; trust `Emulator.certificates.caPEM` to use it.
        public let https: String
        /// `http://127.0.0.1:PORT`, HTTP/2 with prior knowledge.
        public let http2: String
        /// `http://127.0.0.1:PORT`, HTTP/1.1.
        public let http1: String
    }

    public let configuration: EmulatorConfiguration
    /// The development service account's key: its public half checks OAuth assertions.
    let signingKey: _RSA.Signing.PrivateKey
    public let clientEmail: String
    public let privateKeyID: String
    let state: EmulatorState
    /// The push service for browsers (`EmulatorWebPush`).
    let webPush = EmulatorWebPush()
    /// The VAPID key of the gateways it hands out (`withGateway`): PEM and public key.
    public let webPushKey = VAPIDCredentials.newKey()
    let connections = ConnectionCounter()
    /// The APNs signing keys it checks provider tokens with (raw public keys), by key id.
    private let apnsKeys = Mutex<[String: Data]>([:])
    private let logger: Logger
    /// The TLS certificates of the `https` endpoint, made at start.
    public let certificates: EmulatorCertificates

    /// - Parameter signingKey: the service account key to trust; a new one when nil.
    public init(configuration: EmulatorConfiguration = .init(), signingKey: _RSA.Signing.PrivateKey? = nil, logger: Logger) throws {
        self.configuration = configuration
        self.signingKey = try signingKey ?? Self.developmentKey()
        self.clientEmail = "herald-emulator@\(configuration.projectID).iam.gserviceaccount.com"
        self.privateKeyID = "emulator-" + String(UUID().uuidString.prefix(8)).lowercased()
        self.state = EmulatorState(faults: configuration.faults, lean: configuration.leanRecording)
        self.logger = logger
        self.certificates = try EmulatorCertificates()
    }

    /// Checks APNs provider tokens whose `kid` is `keyID` against `key` from now on.
    public func trustAPNsKey(_ key: P256.Signing.PublicKey, id keyID: String) {
        let raw = key.rawRepresentation
        apnsKeys.withLock { $0[keyID] = raw }
    }

    func apnsKey(_ keyID: String) -> P256.Signing.PublicKey? {
        apnsKeys.withLock { $0[keyID] }.flatMap { try? P256.Signing.PublicKey(rawRepresentation: $0) }
    }

    /// The development service account's key, made once per process: a 2048-bit RSA key
    /// takes up to a second to make (more in a debug build), on the calling thread, and the
    /// tests start dozens of emulators at once; they queued every other task behind them.
    private static let sharedKey = Mutex<_RSA.Signing.PrivateKey?>(nil)

    private static func developmentKey() throws -> _RSA.Signing.PrivateKey {
        try sharedKey.withLock { key in
            if let key { return key }
            let made = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            key = made
            return made
        }
    }

    /// A service-account JSON that points at this emulator's token endpoint. It holds a
    /// development key that only this emulator trusts.
    public func serviceAccountJSON(tokenURI: String) -> Data {
        let object: [String: String] = [
            "type": "service_account", "project_id": configuration.projectID, "private_key_id": privateKeyID,
            "private_key": signingKey.pkcs8PEMRepresentation, "client_email": clientEmail, "token_uri": tokenURI,
            "client_id": "0", "auth_uri": tokenURI
        ]
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])) ?? Data()
    }

    /// How many messages were accepted so far (cheap, unlike `messages()`).
    public func acceptedCount() async -> Int { state.accepted }

    /// Webhook requests its receiver took (`POST /webhooks/…`), and how many repeated an id.
    public var webhooks: (received: Int, repeated: Int) { state.webhooks }

    /// Messages accepted so far, oldest first.
    public func messages() async -> [RecordedMessage] { state.messages }

    /// Forgets recorded messages and counters.
    public func clearMessages() async { state.clear() }

    /// Changes the injected faults while running.
    public func setFaults(_ faults: EmulatorConfiguration.Faults) async { state.setFaults(faults) }

    /// Treats every access token issued so far as expired.
    public func revokeAccessTokens() async { state.revokeAccessTokens() }

    /// TCP connections accepted since start, over both protocols.
    public var connectionCount: Int { connections.value }

    /// Serves until the task is cancelled; `onReady` gets the endpoints once all three listen.
    public func run(onReady: @escaping @Sendable (Endpoints) async -> Void = { _ in }) async throws {
        enum Listener: CaseIterable { case https, http2, http1 }
        let ports = Mutex<[Listener: Int]>([:])
        let listening = Counter()
        let host = configuration.host
        // Event loops of its own: an emulator under heavy load (thousands of HTTP/2 streams,
        // whose tasks NIO runs in batches between polls) must not delay another emulator's
        // TLS handshakes, as it did on the process-wide loops (a CLI test's token fetch,
        // waiting behind a 10,000-send test, ran past its 20 s timeout).
        // (Not shut down at the end: see `EmulatorLoopPool`.)
        let group = EmulatorLoopPool.take()
        // Hummingbird's own lines (a listener started; a connection or listener ended, e.g.
        // "Waiting on child channel: CancellationError()" when a sibling's port is taken) are
        // noise for a stand-in; they show only when debugging.
        var serverLogger = logger
        if logger.logLevel > .debug { serverLogger.logLevel = .critical }
        let tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(certificates.serverCertificatePEM.utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(certificates.serverKeyPEM.utf8), format: .pem)))

        /// One listener; the endpoints are announced once every listener has its port.
        func application(
            _ listener: Listener, port: Int, httpVersion: String,
            _ channel: @escaping @Sendable (@escaping HTTPChannelHandler.Responder) throws -> any ServerChildChannel
        ) -> Application<EmulatorResponder> {
            Application(
                responder: EmulatorResponder(emulator: self, httpVersion: httpVersion),
                server: HTTPServerBuilder(channel),
                configuration: .init(address: .hostname(host, port: port), serverName: "herald-emulator"),
                onServerRunning: { server in
                    listening.increment()
                    let all = ports.withLock { ports -> [Listener: Int]? in
                        ports[listener] = server.localAddress?.port
                        return ports.count == Listener.allCases.count ? ports : nil
                    }
                    guard let all, let https = all[.https], let http2 = all[.http2], let http1 = all[.http1] else { return }
                    self.webPush.base.withLock { $0 = "http://\(host):\(http1)" }
                    await onReady(Endpoints(https: "https://\(host):\(https)", http2: "http://\(host):\(http2)", http1: "http://\(host):\(http1)"))
                },
                eventLoopGroupProvider: .shared(group),
                logger: serverLogger)
        }
        let counter = connections
        let applications = [
            // Every listener answers on its connections' event loops (Hummingbird's responder is
            // there for the Application's sake only).
            application(.https, port: configuration.httpsPort, httpVersion: "1.1") { _ in
                ConnectionCountingChannel(
                    base: try EmulatorTLSChannel(tlsConfiguration: tls, offersHTTP2: self.configuration.httpsOffersHTTP2, emulator: self),
                    counter: counter)
            },
            application(.http2, port: configuration.http2Port, httpVersion: "2") { _ in
                ConnectionCountingChannel(
                    base: EmulatorLoopChannel(wire: .h2c, responder: EmulatorResponder(emulator: self, httpVersion: "2")), counter: counter)
            },
            application(.http1, port: configuration.http1Port, httpVersion: "1.1") { _ in
                ConnectionCountingChannel(
                    base: EmulatorLoopChannel(wire: .http1, responder: EmulatorResponder(emulator: self, httpVersion: "1.1")), counter: counter)
            }
        ]
        let configuredPorts = [configuration.httpsPort, configuration.http2Port, configuration.http1Port]
        // Each listener runs in a service group of its own, stopped by a graceful shutdown,
        // never by cancellation: NIO drops a connection accepted but not yet handed to the
        // server when the serving task is cancelled, and traps ("Deinited NIOAsyncWriter
        // without calling finish()", swift-nio #2637), which took the whole test process with
        // it. So the groups run in tasks of their own, which this task's cancellation does not
        // reach: it asks them to shut down instead.
        // Connections still open half a second after the listeners stopped (a client's idle
        // HTTP/2 connections: nothing tells them to go) are closed, so that the shutdown ends.
        // (Should it hang all the same, the tasks are cancelled after all, 10 s later.)
        let services = applications.map { ServiceGroup(configuration: .init(services: [$0], logger: serverLogger)) }
        let serving = TaskList()
        let stopAll: @Sendable () -> Void = {
            for service in services { Task { await service.triggerGracefulShutdown() } }
            Task {
                try? await Task.sleep(for: .milliseconds(500))
                counter.closeAll()
                try? await Task.sleep(for: .seconds(10))
                serving.cancelAll()
            }
        }
        // The event loops go back to the pool last, once every connection has closed. One
        // still open after two seconds may still have work on them: the loops are then left
        // to it, neither shut down (see `EmulatorLoopPool`) nor lent to the next emulator,
        // whose TLS handshakes would wait behind that work.
        func stopLoops() async {
            counter.closeAll()
            if await counter.waitUntilAllClosed(within: .seconds(2)) { EmulatorLoopPool.giveBack(group) }
        }
        let failed = Flag()
        do {
            try await serve(services, on: configuredPorts, serving: serving, listening: listening, failed: failed, stopAll: stopAll)
        } catch {
            await stopLoops()
            throw error
        }
        await stopLoops()
    }

    /// Runs the listeners one after another (see `run`) until one ends or the task is cancelled.
    private func serve(
        _ services: [ServiceGroup], on configuredPorts: [Int], serving: TaskList, listening: Counter, failed: Flag,
        stopAll: @escaping @Sendable () -> Void
    ) async throws {
        try await withTaskCancellationHandler {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for (index, (service, port)) in zip(services, configuredPorts).enumerated() {
                    // The listener and its service groups run on Swift's shared pool; each
                    // connection moves to the emulator's own threads (`ConnectionCountingChannel`).
                    let task = Task { try await service.run() }
                    serving.append(task)
                    tasks.addTask {
                        do {
                            try await withTaskCancellationHandler {
                                try await task.value
                            } onCancel: {
                                stopAll()
                            }
                        } catch {
                            failed.raise()
                            if let error = error as? IOError, error.errnoCode == EADDRINUSE { throw EmulatorError.portInUse(port) }
                            throw error
                        }
                    }
                    // One listener at a time: the next binds once this one listens (or failed).
                    // Started together, a port in use stopped its siblings in the middle of
                    // their binds, which then completed on event loops already shut down
                    // ("Cannot schedule tasks on an EventLoop that has already shut down" on
                    // stderr, beside the one line the CLI promises).
                    while listening.count <= index, !failed.isRaised, !Task.isCancelled {
                        try? await Task.sleep(for: .milliseconds(2))
                    }
                    if failed.isRaised || Task.isCancelled { break }
                }
                // One listener ended (or failed, or this task was cancelled): stop the others and
                // wait for all of them.
                defer { stopAll() }
                try await tasks.next()
                stopAll()
                try await tasks.waitForAll()
            }
        } onCancel: {
            stopAll()
        }
    }

    /// Runs an emulator for the length of `body` (tests, benchmarks, the demo).
    public static func withRunning<Result: Sendable>(
        _ configuration: EmulatorConfiguration = .init(), logger: Logger,
        _ body: @Sendable (Emulator, Endpoints) async throws -> Result
    ) async throws -> Result {
        let emulator = try Emulator(configuration: configuration, logger: logger)
        let (stream, continuation) = AsyncStream.makeStream(of: Endpoints.self)
        return try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask {
                try await emulator.run { continuation.yield($0) }
                return nil
            }
            var iterator = stream.makeAsyncIterator()
            guard let endpoints = await iterator.next() else { throw CancellationError() }
            defer { group.cancelAll() }
            return try await body(emulator, endpoints)
        }
    }
}

/// A count one task raises and another reads.
private final class Counter: Sendable {
    private let state = Mutex(0)
    func increment() { state.withLock { $0 += 1 } }
    var count: Int { state.withLock { $0 } }
}

/// Tasks to cancel as a last resort.
private final class TaskList: Sendable {
    private let tasks = Mutex<[Task<Void, any Error>]>([])
    func append(_ task: Task<Void, any Error>) { tasks.withLock { $0.append(task) } }
    func cancelAll() { for task in tasks.withLock({ $0 }) { task.cancel() } }
}

/// A flag one task raises and another reads.
private final class Flag: Sendable {
    private let state = Mutex(false)
    func raise() { state.withLock { $0 = true } }
    var isRaised: Bool { state.withLock { $0 } }
}
