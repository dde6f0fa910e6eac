import HeraldCore
import HeraldLive
import NIOCore
import NIOWebSocket

/// The WebSocket protocol of one live socket (RFC 6455 over NIO's frame codec), on its
/// channel's event loop: messages of up to `maxFrameBytes` in one frame or several, pings,
/// pongs and the close. Whole messages go to the socket's inbox for the hub; nothing here waits.
///
/// What RFC 6455 says a server must fail the connection for, it closes with its code: a frame
/// the client did not mask, reserved bits or opcodes, a continuation with nothing to continue or
/// a new message in the middle of one, a malformed close (1002); a text message that is not
/// UTF-8 (1007). NIO's codec answers oversized or fragmented control frames itself.
final class LiveFrameHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame

    private let socket: LiveSocket
    private let hub: LiveHub
    private let maxFrameBytes: Int
    private let floodRate: Double
    /// A message whose last frame has not come yet.
    private var message: ByteBuffer?
    private var isBinary = false
    /// After a close this side sent for what the app did (too big, a flood): everything but
    /// the app's close is ignored.
    private var draining = false

    init(socket: LiveSocket, hub: LiveHub) {
        self.socket = socket
        self.hub = hub
        self.maxFrameBytes = hub.settings.maxFrameBytes
        self.floodRate = hub.settings.floodRate
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if draining {
            if frame.opcode == .connectionClose { closed(by: frame, context: context) }
            return
        }
        guard frame.maskKey != nil else { return fail("a client's frames are masked (RFC 6455 §5.1)") }
        guard !frame.rsv1, !frame.rsv2, !frame.rsv3 else { return fail("no extension was agreed: reserved bits must be 0") }
        switch frame.opcode {
        case .connectionClose:
            closed(by: frame, context: context)
        case .text, .binary, .continuation:
            read(frame)
        case .ping:
            socket.pong(Array(frame.unmaskedData.readableBytesView))
        case .pong:
            socket.ponged()
        default:
            fail("opcode \(frame.opcode) is reserved")
        }
    }

    /// Fails the connection as RFC 6455 §7.1.7 says: the close, then nothing more is read.
    private func fail(_ reason: String, code: UInt16 = LiveCloseCode.protocolError) {
        message = nil
        draining = true
        socket.close(code: code, reason: reason)
    }

    private func read(_ frame: WebSocketFrame) {
        if frame.opcode != .continuation {
            guard message == nil else { return fail("a new message began before the last one ended") }
            message = ByteBuffer()
            isBinary = frame.opcode == .binary
        }
        guard var buffer = message else { return fail("a continuation without a message before it") }
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
        guard let text = String(validating: buffer.readableBytesView, as: UTF8.self) else {
            return fail("a text message must be UTF-8", code: LiveCloseCode.invalidData)
        }
        guard socket.take(text, handle: { [hub, socket] text in await hub.receive(text, from: socket) }) else {
            refuse(
                LiveClientFrame.Refusal("flood", "more than \(hub.settings.inboxLimit) frames wait unhandled: send each after the last is answered"))
            draining = true
            socket.close(code: LiveCloseCode.policyViolation, reason: "too many frames waiting")
            return
        }
    }

    /// The app closes: answered with its code, unless this side closed first (then the
    /// connection ends now).
    private func closed(by frame: WebSocketFrame, context: ChannelHandlerContext) {
        guard !socket.isClosing else {
            context.close(promise: nil)
            return
        }
        var data = frame.unmaskedData
        // A close carries nothing, or a code and a UTF-8 reason (RFC 6455 §5.5.1, §7.4).
        guard data.readableBytes != 1 else { return answerClose(LiveCloseCode.protocolError) }
        guard let code = data.readWebSocketErrorCode().map({ UInt16(webSocketErrorCode: $0) }) else { return answerClose(1000) }
        guard Self.mayBeSent(code) else { return answerClose(LiveCloseCode.protocolError) }
        guard String(validating: data.readableBytesView, as: UTF8.self) != nil else { return answerClose(LiveCloseCode.invalidData) }
        answerClose(code)
    }

    private func answerClose(_ code: UInt16) {
        draining = true
        socket.close(code: code, reason: "", answering: true)
    }

    /// The close codes an endpoint may send (RFC 6455 §7.4): those defined for it, and the
    /// ranges for libraries and applications.
    static func mayBeSent(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1011, 3000...4999: true
        default: false
        }
    }

    private func refuse(_ refusal: LiveClientFrame.Refusal) {
        hub.refuse(socket, refusal)
    }

    func channelInactive(context: ChannelHandlerContext) {
        socket.ended()
        hub.closed(socket)
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
