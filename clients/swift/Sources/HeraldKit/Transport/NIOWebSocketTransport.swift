#if os(Linux) && NIOTransports
    import Foundation
    import NIOCore
    import NIOHTTP1
    import NIOPosix
    import NIOWebSocket

    /// The WebSocket client over SwiftNIO (`ws` and `wss`), for Linux.
    public struct NIOWebSocketTransport: WebSocketTransport {
        public init() {}

        enum Upgrade: Sendable {
            case socket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
            case refused(NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>)
        }

        public func connect(to url: URL, headers: [(name: String, value: String)], timeout: Duration) async throws -> any WebSocketConnection {
            let endpoint: Endpoint
            do { endpoint = try Endpoint(url) } catch { throw WebSocketRefusal.transport("\(error)") }
            var target = url.path.isEmpty ? "/" : url.path
            if let query = url.query { target += "?" + query }
            let requestTarget = target
            let upgrade: EventLoopFuture<Upgrade>
            let channel: any Channel
            do {
                (upgrade, channel) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connectTimeout(.nanoseconds(Int64(timeout.seconds * 1e9)))
                    .connect(host: endpoint.host, port: endpoint.port) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try endpoint.addTLS(to: channel)
                            let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: 1 << 20) { channel, _ in
                                channel.eventLoop.makeCompletedFuture {
                                    .socket(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                                }
                            }
                            var fields = HTTPHeaders()
                            fields.add(name: "Host", value: endpoint.hostHeader)
                            fields.add(name: "Content-Length", value: "0")
                            for (name, value) in headers { fields.add(name: name, value: value) }
                            let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: requestTarget, headers: fields)
                            let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                                upgradeRequestHead: head, upgraders: [upgrader],
                                notUpgradingCompletionHandler: { channel in
                                    // The refusal's head and body come next, to this channel.
                                    channel.eventLoop.makeCompletedFuture {
                                        .refused(
                                            try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel))
                                    }
                                })
                            var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                            // The server writes `hello` right behind the 101, and one read may
                            // bring both: those bytes are the socket's.
                            pipeline.leftOverBytesStrategy = .forwardBytes
                            return (try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline), channel)
                        }
                    }
            } catch {
                throw WebSocketRefusal.transport("\(endpoint.host):\(endpoint.port): \(error)")
            }
            let deadline = channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(timeout.seconds * 1e9))) { channel.close(promise: nil) }
            let result: Upgrade
            do { result = try await upgrade.get() } catch {
                deadline.cancel()
                throw WebSocketRefusal.transport("the upgrade failed: \(error)")
            }
            switch result {
            case .socket(let socket):
                deadline.cancel()
                return await NIOWebSocketConnection.open(socket)
            case .refused(let answer):
                defer { deadline.cancel() }
                throw await Self.refusal(answer)
            }
        }

        /// The refusal's status, `Retry-After` and problem document.
        static func refusal(_ answer: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>) async -> WebSocketRefusal {
            do {
                return try await answer.executeThenClose { inbound, _ in
                    var status = 0
                    var retryAfter: Int?
                    var body = ByteBuffer()
                    for try await part in inbound {
                        switch part {
                        case .head(let head):
                            status = Int(head.status.code)
                            retryAfter = head.headers.first(name: "retry-after").flatMap { Int($0) }
                        case .body(var chunk): body.writeBuffer(&chunk)
                        case .end: return .status(status, retryAfter: retryAfter, body: Data(body.readableBytesView))
                        }
                    }
                    return status > 0 ? .status(status, retryAfter: retryAfter, body: Data(body.readableBytesView)) : .transport("no answer")
                }
            } catch {
                return .transport("\(error)")
            }
        }
    }

    /// An open socket: text messages in, pings answered, fragments joined, the close code kept.
    /// One task owns the channel (`executeThenClose`) and hands its messages over a stream.
    final class NIOWebSocketConnection: WebSocketConnection, @unchecked Sendable {
        // Read by one reader at a time (LiveSession's receive loop).
        private var incoming: AsyncStream<WebSocketIncoming>.Iterator
        private let outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>
        private let channel: any Channel

        static func open(_ socket: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>) async -> NIOWebSocketConnection {
            let (stream, continuation) = AsyncStream<WebSocketIncoming>.makeStream(bufferingPolicy: .unbounded)
            let writer = await withCheckedContinuation { (ready: CheckedContinuation<NIOAsyncChannelOutboundWriter<WebSocketFrame>, Never>) in
                Task {
                    var closeCode = 1006
                    do {
                        try await socket.executeThenClose { inbound, outbound in
                            ready.resume(returning: outbound)
                            var fragments = ByteBuffer()
                            for try await frame in inbound {
                                switch frame.opcode {
                                case .ping:
                                    try? await outbound.write(WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData))
                                case .text, .continuation:
                                    var data = frame.unmaskedData
                                    fragments.writeBuffer(&data)
                                    if frame.fin {
                                        continuation.yield(.text(String(buffer: fragments)))
                                        fragments.clear()
                                    }
                                case .connectionClose:
                                    var data = frame.unmaskedData
                                    closeCode = data.readInteger(as: UInt16.self).map(Int.init) ?? 1005
                                    // Answer the close; then the server ends the connection.
                                    try? await outbound.write(
                                        WebSocketFrame(
                                            fin: true, opcode: .connectionClose, maskKey: .random(), data: ByteBuffer(integer: UInt16(closeCode))))
                                    return
                                default:
                                    continue
                                }
                            }
                        }
                    } catch {
                        // A broken connection: 1006 unless a close frame said otherwise.
                    }
                    continuation.yield(.closed(code: closeCode))
                    continuation.finish()
                }
            }
            return NIOWebSocketConnection(incoming: stream.makeAsyncIterator(), outbound: writer, channel: socket.channel)
        }

        private init(incoming: AsyncStream<WebSocketIncoming>.Iterator, outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>, channel: any Channel)
        {
            self.incoming = incoming
            self.outbound = outbound
            self.channel = channel
        }

        func receive() async throws -> WebSocketIncoming {
            await incoming.next() ?? .closed(code: 1006)
        }

        func send(text: String) async throws {
            try await outbound.write(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: text)))
        }

        func close(code: Int) async {
            try? await outbound.write(
                WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: ByteBuffer(integer: UInt16(clamping: code))))
            // The server answers and closes; if it does not, the connection ends anyway.
            let channel = channel
            channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
        }
    }
#endif
