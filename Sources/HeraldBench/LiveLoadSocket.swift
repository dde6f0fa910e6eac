import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// One socket of `herald bench live`'s crowd: a WebSocket client of `/v1/live` that hands each
/// text frame to `onText` on its event loop (no task a socket: ten thousand of them share a
/// few threads), answers pings, and says when it closed (with the server's close code, if it
/// sent one).
final class LiveLoadSocket: Sendable {
    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    private let channel: any Channel

    private init(channel: any Channel) {
        self.channel = channel
    }

    /// Opens `/v1/live?query` as `email` (a tenant key on their behalf).
    static func open(
        host: String, port: Int, key: String, email: String, query: String, onText: @escaping @Sendable (String) -> Void,
        onClose: @escaping @Sendable (UInt16?) -> Void
    ) async throws -> LiveLoadSocket {
        let (upgrade, channel) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: host, port: port) {
            channel in
            channel.eventLoop.makeCompletedFuture {
                let upgrader = NIOTypedWebSocketClientUpgrader<Bool>(maxFrameSize: 1 << 20) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(LiveLoadHandler(onText: onText, onClose: onClose))
                        return true
                    }
                }
                var headers = HTTPHeaders()
                headers.add(name: "Host", value: "\(host):\(port)")
                headers.add(name: "Authorization", value: "Bearer \(key)")
                headers.add(name: "Herald-On-Behalf-Of", value: email)
                headers.add(name: "Content-Length", value: "0")
                let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/v1/live" + (query.isEmpty ? "" : "?" + query), headers: headers)
                let configuration = NIOTypedHTTPClientUpgradeConfiguration<Bool>(
                    upgradeRequestHead: head, upgraders: [upgrader],
                    notUpgradingCompletionHandler: { channel in channel.eventLoop.makeCompletedFuture { false } })
                var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                pipeline.leftOverBytesStrategy = .forwardBytes
                return (try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline), channel)
            }
        }
        guard try await upgrade.get() else {
            try? await channel.close()
            throw Refused(description: "the server refused \(email)'s upgrade")
        }
        return LiveLoadSocket(channel: channel)
    }

    func send(_ text: String) {
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: text)), promise: nil)
    }

    /// Drops the connection (as a phone losing its network: no close frame).
    func drop() {
        channel.close(promise: nil)
    }
}

/// The frames of one `LiveLoadSocket`.
private final class LiveLoadHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let onText: @Sendable (String) -> Void
    private let onClose: @Sendable (UInt16?) -> Void
    /// The code of the server's close frame, once it came.
    private var closeCode: UInt16?

    init(onText: @escaping @Sendable (String) -> Void, onClose: @escaping @Sendable (UInt16?) -> Void) {
        self.onText = onText
        self.onClose = onClose
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            onText(String(buffer: frame.unmaskedData))
        case .ping:
            context.writeAndFlush(
                wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)), promise: nil)
        case .connectionClose:
            var data = frame.unmaskedData
            closeCode = data.readInteger(as: UInt16.self)
            context.close(promise: nil)
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        onClose(closeCode)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
