import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A WebSocket client of the live channel (`GET /v1/live`), for the demo and the benches: one
/// connection, text frames in and out (masked, as a client's must be), pings answered.
public struct LiveClient: Sendable {
    public struct Refused: Error, CustomStringConvertible {
        public let description: String
    }

    private enum Upgrade: Sendable {
        case socket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    /// One open socket: the frames it receives, and a way to send.
    public struct Session {
        var frames: NIOAsyncChannelInboundStream<WebSocketFrame>.AsyncIterator
        let outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>

        /// The next text frame (pings are answered on the way); nil when the server closed.
        public mutating func receive() async throws -> String? {
            while let frame = try await frames.next() {
                switch frame.opcode {
                case .text: return String(buffer: frame.unmaskedData)
                case .ping: try await outbound.write(WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData))
                case .connectionClose: return nil
                default: continue
                }
            }
            return nil
        }

        /// The next frame that is a JSON object of this `type` (and passes `test`), skipping others.
        public mutating func receive(type: String, where test: ([String: Any]) -> Bool = { _ in true }) async throws -> [String: Any]? {
            while let text = try await receive() {
                if let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], object["type"] as? String == type,
                    test(object)
                {
                    return object
                }
            }
            return nil
        }

        public func send(_ text: String) async throws {
            try await outbound.write(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: text)))
        }
    }

    let host: String
    let port: Int

    /// - Parameter base: the server's base URL, `http://host:port`.
    public init?(base: String) {
        guard let url = URL(string: base), let host = url.host, let port = url.port else { return nil }
        self.host = host
        self.port = port
    }

    /// Opens `/v1/live` with `token`, runs `body` with the session, and closes. `timeout` after
    /// connecting, the connection is closed whatever it waits for, the upgrade's answer
    /// included (`body` then reads the end).
    public func session<Result: Sendable>(
        token: String, query: String = "", timeout: Duration = .seconds(60), _ body: (inout Session) async throws -> Result
    ) async throws -> Result {
        let host = host
        let (upgrade, channel) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: host, port: port) {
            channel in
            channel.eventLoop.makeCompletedFuture {
                let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: 1 << 20) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        .socket(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                    }
                }
                var headers = HTTPHeaders()
                headers.add(name: "Host", value: host)
                headers.add(name: "Authorization", value: "Bearer \(token)")
                headers.add(name: "Content-Length", value: "0")
                let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/v1/live" + (query.isEmpty ? "" : "?" + query), headers: headers)
                let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                    upgradeRequestHead: head, upgraders: [upgrader],
                    notUpgradingCompletionHandler: { channel in channel.eventLoop.makeCompletedFuture { .refused } })
                var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                // The server writes its first frame (hello) right behind the 101, and one read
                // may bring both: the bytes after the response are the socket's, not to be
                // dropped with the HTTP decoder (NIO's default drops them).
                pipeline.leftOverBytesStrategy = .forwardBytes
                return (try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline), channel)
            }
        }
        let deadline = channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(timeout.timeInterval * 1e9))) { channel.close(promise: nil) }
        defer { deadline.cancel() }
        guard case .socket(let socket) = try await upgrade.get() else { throw Refused(description: "the server refused the WebSocket upgrade") }
        return try await socket.executeThenClose { inbound, outbound in
            var session = Session(frames: inbound.makeAsyncIterator(), outbound: outbound)
            let result = try await body(&session)
            try? await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: ByteBuffer(bytes: [0x03, 0xE8])))
            return result
        }
    }
}
