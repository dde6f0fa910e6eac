#if os(Linux) && NIOTransports
    import Foundation
    import NIOCore
    import NIOHTTP1
    import NIOPosix
    import NIOSSL

    /// HTTP/1.1 over SwiftNIO, TLS for `https`, on kept-alive connections (`NIOConnectionPool`,
    /// one for the process). For Linux, where Foundation's URLSession needs libcurl.
    public struct NIOHTTPTransport: HTTPTransport {
        let pool: NIOConnectionPool

        public init() { pool = .shared }

        init(pool: NIOConnectionPool) { self.pool = pool }

        public func send(_ request: HTTPRequestData, to server: URL, timeout: Duration) async throws -> HTTPResponseData {
            let endpoint = try Endpoint(server)
            let start = ContinuousClock.now
            if let channel = pool.take(endpoint) {
                do {
                    return try await exchange(request, on: channel, endpoint, until: start + timeout)
                } catch HeraldError.transport(let why)
                    where (why.underlying as? ExchangeFailure)?.answerStarted == false && request.isIdempotent
                    && ContinuousClock.now < start + timeout
                {
                    // The server closed the idle connection as the request went out: a request
                    // that changes nothing twice goes once more, on a new one. (A POST may have
                    // arrived: it is not sent again here; the client's caller decides.)
                }
            }
            let channel = try await pool.connect(endpoint, timeout: timeout)
            return try await exchange(request, on: channel, endpoint, until: start + timeout)
        }

        /// One request on `channel`, which goes back to the pool when the answer came whole.
        private func exchange(
            _ request: HTTPRequestData, on channel: any Channel, _ endpoint: Endpoint, until end: ContinuousClock.Instant
        ) async throws -> HTTPResponseData {
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: endpoint.hostHeader)
            for (name, value) in request.headers { headers.add(name: name, value: value) }
            headers.add(name: "Content-Length", value: "\(request.body?.count ?? 0)")
            let head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: request.target, headers: headers)
            let answer = channel.eventLoop.makePromise(of: PooledAnswer.self)
            // Whatever it waits for, the connection closes at the deadline (which fails the answer).
            let left = end - ContinuousClock.now
            let deadline = channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(max(left.seconds, 0) * 1e9))) { channel.close(promise: nil) }
            defer { deadline.cancel() }
            channel.writeAndFlush(PooledExchange(head: head, body: request.body, answer: answer)).whenFailure { error in
                // The handler never had it (the connection was gone): the answer is this one.
                answer.fail(ExchangeFailure(answerStarted: false, description: "\(error)"))
            }
            do {
                let answered = try await answer.futureResult.get()
                if answered.keepAlive { pool.giveBack(channel, to: endpoint) } else { channel.close(promise: nil) }
                return answered.response
            } catch let failure as ExchangeFailure {
                channel.close(promise: nil)
                if ContinuousClock.now >= end {
                    throw HeraldError.transport("\(endpoint.host):\(endpoint.port): no answer within the timeout")
                }
                throw HeraldError.transport(TransportFailure("\(endpoint.host):\(endpoint.port): \(failure)", underlying: failure))
            }
        }
    }

    extension HTTPRequestData {
        /// Whether sending it twice changes nothing more than sending it once (RFC 9110, 9.2.2).
        var isIdempotent: Bool { ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"].contains(method) }
    }

    /// Where a URL points, for a connection.
    struct Endpoint {
        var host: String
        var port: Int
        var tls: Bool

        init(_ url: URL) throws {
            guard let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
                throw HeraldError.transport("not a server address: \(url)")
            }
            tls = scheme == "https" || scheme == "wss"
            self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
            port = url.port ?? (tls ? 443 : 80)
        }

        /// Which pool of connections it uses.
        var key: String { "\(tls ? "https" : "http")://\(host):\(port)" }

        var hostHeader: String {
            let name = host.contains(":") ? "[\(host)]" : host
            return port == (tls ? 443 : 80) ? name : "\(name):\(port)"
        }

        func addTLS(to channel: any Channel) throws {
            guard tls else { return }
            let context = try NIOSSLContext(configuration: .makeClientConfiguration())
            // An address is not a name to ask a certificate for (SNI).
            let isAddress = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
            let handler = try NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host)
            try channel.pipeline.syncOperations.addHandler(handler)
        }
    }
#endif
