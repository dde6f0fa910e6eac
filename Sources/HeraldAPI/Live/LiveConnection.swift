import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// The WebSocket protocol of one live socket (RFC 6455 over NIO's frame codec): one task
/// writes the socket's queue (frames, the pings the hub's heartbeat puts in, the close), one
/// reads what the app sends (messages of up to `maxFrameBytes`, in one frame or several,
/// pongs, the close).
struct LiveConnection {
    let socket: LiveSocket
    let settings: LiveSettings
    let logger: Logger
    /// What the app sends, one text message at a time.
    let receive: @Sendable (String) async -> Void

    /// Runs until either side closes; the channel is closed when it returns.
    func run(_ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>) async {
        let closing = ClosingState()
        let underlying = channel.channel
        socket.whenDropped { underlying.close(promise: nil) }
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await write(outbound, closing: closing) }
                    group.addTask { try await read(inbound, closing: closing) }
                    // The first to end (the app closed, the close went out: after a refusal,
                    // a flood, an unanswered heartbeat) ends the connection.
                    _ = try await group.next()
                    group.cancelAll()
                }
            }
        } catch {
            logger.debug("live socket ended", metadata: ["error": "\(error)"])
        }
        socket.finish()
    }

    private func write(_ outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>, closing: ClosingState) async throws {
        for await item in socket.outgoing {
            switch item {
            case .text(let text):
                try await outbound.write(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text)))
                socket.written()
            case .ping:
                try await outbound.write(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(string: "herald")))
            case .pong(let data):
                try await outbound.write(WebSocketFrame(fin: true, opcode: .pong, data: data))
            case .close(let code, let reason):
                var data = ByteBuffer()
                data.write(webSocketErrorCode: WebSocketErrorCode(codeNumber: Int(code)))
                data.writeString(String(reason.utf8.prefix(120)) ?? "")
                try await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))
                closing.closeSent()
                // The app answers with its own close; it has a moment to.
                try await Task.sleep(for: .seconds(2))
                return
            }
        }
    }

    private func read(_ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>, closing: ClosingState) async throws {
        var message: ByteBuffer?
        var isBinary = false
        // One iterator: the frames after a close this side sent are read from it too.
        var frames = inbound.makeAsyncIterator()
        while let frame = try await frames.next() {
            switch frame.opcode {
            case .text, .binary, .continuation:
                if frame.opcode != .continuation {
                    message = ByteBuffer()
                    isBinary = frame.opcode == .binary
                }
                guard var buffer = message else {
                    refuse(LiveClientFrame.Refusal("invalid_frame", "a continuation without a message before it"))
                    continue
                }
                var data = frame.unmaskedData
                guard buffer.readableBytes + data.readableBytes <= settings.maxFrameBytes else {
                    socket.close(code: LiveCloseCode.tooBig, reason: "a frame is at most \(settings.maxFrameBytes) bytes")
                    return try await drain(&frames)
                }
                buffer.writeBuffer(&data)
                message = frame.fin ? nil : buffer
                guard frame.fin else { continue }
                guard socket.admitIncoming() else {
                    refuse(LiveClientFrame.Refusal("flood", "more than \(Int(settings.floodRate)) frames a second"))
                    socket.close(code: LiveCloseCode.policyViolation, reason: "too many frames")
                    return try await drain(&frames)
                }
                guard !isBinary else {
                    refuse(LiveClientFrame.Refusal("invalid_frame", "frames are JSON text"))
                    continue
                }
                await receive(String(buffer: buffer))
            case .ping:
                socket.sendControl(.pong(frame.unmaskedData))
            case .pong:
                socket.ponged()
            case .connectionClose:
                // The app closes: answer with its code (unless this side closed first).
                if !closing.hasSentClose {
                    var data = frame.unmaskedData
                    let code = data.readWebSocketErrorCode().map { UInt16(webSocketErrorCode: $0) } ?? 1000
                    socket.close(code: code == 1005 ? 1000 : code, reason: "")
                    try await Task.sleep(for: .milliseconds(200))
                }
                return
            default:
                continue
            }
        }
    }

    /// After a close went out: read until the app closes too (or the writer gives up).
    private func drain(_ frames: inout NIOAsyncChannelInboundStream<WebSocketFrame>.AsyncIterator) async throws {
        while let frame = try await frames.next(), frame.opcode != .connectionClose {}
    }

    private func refuse(_ refusal: LiveClientFrame.Refusal) {
        socket.send(LiveFrame.text(LiveFrame.Failure(code: refusal.code, detail: refusal.detail)))
    }
}

/// Whether this side's close went out.
final class ClosingState: Sendable {
    private let sent = Mutex(false)

    func closeSent() {
        sent.withLock { $0 = true }
    }

    var hasSentClose: Bool { sent.withLock { $0 } }
}
