#if os(Linux) && NIOTransports
    import Foundation
    import NIOCore
    import NIOHTTP1
    import NIOPosix

    /// Kept-alive HTTP/1.1 connections by server, for `NIOHTTPTransport`: a request takes an
    /// idle one (or opens one) and gives it back when its answer came whole and the server
    /// keeps it open. A connection idle longer than `maxIdle` is closed rather than reused (a
    /// server or a proxy closes idle ones: Herald after 30 s), and at most `maxIdlePerServer`
    /// wait per server.
    final class NIOConnectionPool: Sendable {
        struct Idle: Sendable {
            var channel: any Channel
            var since: ContinuousClock.Instant
        }

        /// The pool of the process: `NIOHTTPTransport()`'s.
        static let shared = NIOConnectionPool()

        let maxIdle: Duration
        let maxIdlePerServer: Int
        private let idle = Locked<[String: [Idle]]>([:])
        /// Connections opened so far (for tests and diagnostics).
        let opened = Locked(0)

        init(maxIdle: Duration = .seconds(10), maxIdlePerServer: Int = 8) {
            self.maxIdle = maxIdle
            self.maxIdlePerServer = maxIdlePerServer
        }

        /// The most recently used idle connection to `endpoint` still open, if any; the ones
        /// idle too long are closed.
        func take(_ endpoint: Endpoint) -> (any Channel)? {
            let now = ContinuousClock.now
            var stale: [any Channel] = []
            let found: (any Channel)? = idle.withLock { idle in
                var waiting = idle[endpoint.key] ?? []
                defer { idle[endpoint.key] = waiting }
                while let last = waiting.popLast() {
                    if last.channel.isActive && now - last.since < maxIdle { return last.channel }
                    stale.append(last.channel)
                }
                return nil
            }
            for channel in stale { channel.close(promise: nil) }
            return found
        }

        /// Gives a connection back after a whole answer; one the server closes, or one too
        /// many, is closed.
        func giveBack(_ channel: any Channel, to endpoint: Endpoint) {
            let kept =
                channel.isActive
                && idle.withLock { idle -> Bool in
                    guard (idle[endpoint.key]?.count ?? 0) < maxIdlePerServer else { return false }
                    idle[endpoint.key, default: []].append(Idle(channel: channel, since: .now))
                    return true
                }
            if !kept { channel.close(promise: nil) }
        }

        /// Opens a connection to `endpoint` (TLS for `https`).
        func connect(_ endpoint: Endpoint, timeout: Duration) async throws -> any Channel {
            do {
                let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connectTimeout(.nanoseconds(Int64(timeout.seconds * 1e9)))
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try endpoint.addTLS(to: channel)
                            try channel.pipeline.syncOperations.addHTTPClientHandlers()
                            try channel.pipeline.syncOperations.addHandler(PooledHTTPHandler())
                        }
                    }
                    .connect(host: endpoint.host, port: endpoint.port).get()
                opened.withLock { $0 += 1 }
                return channel
            } catch {
                throw HeraldError.transport(TransportFailure("\(endpoint.host):\(endpoint.port): \(error)", underlying: error))
            }
        }

        /// Closes every idle connection.
        func closeIdle() {
            let all = idle.withLock { idle in
                defer { idle = [:] }
                return idle.values.flatMap { $0.map(\.channel) }
            }
            for channel in all { channel.close(promise: nil) }
        }
    }
#endif
