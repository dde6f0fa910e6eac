#if os(Linux) && NIOTransports
    import Foundation
    import NIOCore
    import NIOHTTP1
    import NIOPosix
    import NIOSSL

    /// HTTP/1.1 over SwiftNIO, one connection per request, TLS for `https`. For Linux, where
    /// Foundation's URLSession needs libcurl.
    public struct NIOHTTPTransport: HTTPTransport {
        public init() {}

        public func send(_ request: HTTPRequestData, to server: URL, timeout: Duration) async throws -> HTTPResponseData {
            let endpoint = try Endpoint(server)
            let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
            do {
                channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connectTimeout(.nanoseconds(Int64(timeout.seconds * 1e9)))
                    .connect(host: endpoint.host, port: endpoint.port) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try endpoint.addTLS(to: channel)
                            try channel.pipeline.syncOperations.addHTTPClientHandlers()
                            return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                        }
                    }
            } catch {
                throw HeraldError.transport(TransportFailure("\(endpoint.host):\(endpoint.port): \(error)", underlying: error))
            }
            // Whatever it waits for, the connection closes at the deadline.
            let deadline = channel.channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(timeout.seconds * 1e9))) {
                channel.channel.close(promise: nil)
            }
            defer { deadline.cancel() }
            do {
                return try await channel.executeThenClose { inbound, outbound in
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: endpoint.hostHeader)
                    headers.add(name: "Connection", value: "close")
                    for (name, value) in request.headers { headers.add(name: name, value: value) }
                    headers.add(name: "Content-Length", value: "\(request.body?.count ?? 0)")
                    let method = HTTPMethod(rawValue: request.method)
                    try await outbound.write(.head(HTTPRequestHead(version: .http1_1, method: method, uri: request.target, headers: headers)))
                    if let body = request.body, !body.isEmpty { try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
                    try await outbound.write(.end(nil))

                    var status = 0
                    var answerHeaders: [String: String] = [:]
                    var body = ByteBuffer()
                    for try await part in inbound {
                        switch part {
                        case .head(let head):
                            status = Int(head.status.code)
                            for (name, value) in head.headers { answerHeaders[name.lowercased()] = value }
                        case .body(var chunk):
                            body.writeBuffer(&chunk)
                        case .end:
                            return HTTPResponseData(status: status, headers: answerHeaders, body: Data(body.readableBytesView))
                        }
                    }
                    throw HeraldError.transport("the connection closed before the answer ended")
                }
            } catch let error as HeraldError {
                throw error
            } catch {
                throw HeraldError.transport(TransportFailure("\(error)", underlying: error))
            }
        }
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
