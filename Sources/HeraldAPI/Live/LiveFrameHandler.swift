import HeraldCore
import NIOCore
import NIOWebSocket

/// The WebSocket protocol of one live socket (RFC 6455 over NIO's frame codec), on its
/// channel's event loop: messages of up to `maxFrameBytes` in one frame or several, pings,
/// pongs and the close. Whole messages go to the socket's inbox for the hub; nothing here waits.
final class LiveFrameHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame

    private let socket: LiveSocket
    private let maxFrameBytes: Int
    private let floodRate: Double
    /// What the app sends, one text message at a time.
    private let receive: @Sendable (String) async -> Void
    /// The connection is gone.
    private let ended: @Sendable () -> Void
    /// A message whose last frame has not come yet.
    private var message: ByteBuffer?
    private var isBinary = false
    /// After a close this side sent for what the app did (too big, a flood): everything but
    /// the app's close is ignored.
    private var draining = false

    init(
        socket: LiveSocket, settings: LiveSettings, receive: @escaping @Sendable (String) async -> Void,
        ended: @escaping @Sendable () -> Void
    ) {
        self.socket = socket
        self.maxFrameBytes = settings.maxFrameBytes
        self.floodRate = settings.floodRate
        self.receive = receive
        self.ended = ended
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .connectionClose:
            closed(by: frame, context: context)
        case _ where draining:
            return
        case .text, .binary, .continuation:
            read(frame)
        case .ping:
            socket.pong(frame.unmaskedData)
        case .pong:
            socket.ponged()
        default:
            return
        }
    }

    private func read(_ frame: WebSocketFrame) {
        if frame.opcode != .continuation {
            message = ByteBuffer()
            isBinary = frame.opcode == .binary
        }
        guard var buffer = message else {
            refuse(LiveClientFrame.Refusal("invalid_frame", "a continuation without a message before it"))
            return
        }
        var data = frame.unmaskedData
        guard buffer.readableBytes + data.readableBytes <= maxFrameBytes else {
            message = nil
            draining = true
            socket.close(code: LiveCloseCode.tooBig, reason: "a frame is at most \(maxFrameBytes) bytes")
            return
        }
        buffer.writeBuffer(&data)
        message = frame.fin ? nil : buffer
        guard frame.fin else { return }
        guard socket.admitIncoming() else {
            refuse(LiveClientFrame.Refusal("flood", "more than \(Int(floodRate)) frames a second"))
            draining = true
            socket.close(code: LiveCloseCode.policyViolation, reason: "too many frames")
            return
        }
        guard !isBinary else {
            refuse(LiveClientFrame.Refusal("invalid_frame", "frames are JSON text"))
            return
        }
        socket.take(String(buffer: buffer), handle: receive)
    }

    /// The app closes: answered with its code, unless this side closed first (then the
    /// connection ends now).
    private func closed(by frame: WebSocketFrame, context: ChannelHandlerContext) {
        guard !socket.isClosing else {
            context.close(promise: nil)
            return
        }
        var data = frame.unmaskedData
        let code = data.readWebSocketErrorCode().map { UInt16(webSocketErrorCode: $0) } ?? 1000
        socket.close(code: code == 1005 ? 1000 : code, reason: "", answering: true)
    }

    private func refuse(_ refusal: LiveClientFrame.Refusal) {
        socket.send(LiveFrame.text(LiveFrame.Failure(code: refusal.code, detail: refusal.detail)))
    }

    func channelInactive(context: ChannelHandlerContext) {
        socket.ended()
        ended()
        context.fireChannelInactive()
    }

    /// A protocol error is answered with its close by NIO's `WebSocketProtocolErrorHandler`
    /// before this handler hears of it; anything else (a reset) ends the connection.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOWebSocketError {
            draining = true
            socket.ended()
        } else {
            context.close(promise: nil)
        }
    }
}
