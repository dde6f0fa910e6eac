import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// The WebSocket protocol of one live socket (RFC 6455 over NIO's frame codec): one task
/// writes the socket's queue (frames, pings every heartbeat, the close), one reads what the
/// app sends (messages of up to `maxFrameBytes`, in one frame or several, pongs, the close).
struct LiveConnection {
    let socket: LiveSocket
    let settings: LiveSettings
    let logger: Logger
    /// What the app sends, one text message at a time.
    let receive: @Sendable (String) async -> Void

    /// Runs until either side closes; the channel is closed when it returns.
    func run(_ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>) async {
        let heartbeat = HeartbeatState()
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await write(outbound, heartbeat: heartbeat) }
                    group.addTask { try await beat(heartbeat) }
                    group.addTask { try await read(inbound, heartbeat: heartbeat) }
                    // The first to end (the app closed, the close went out, the heartbeat
                    // went unanswered) ends the connection.
                    _ = try await group.next()
                    group.cancelAll()
                }
            }
        } catch {
            logger.debug("live socket ended", metadata: ["error": "\(error)"])
        }
        socket.finish()
    }

    private func write(_ outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>, heartbeat: HeartbeatState) async throws {
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
                heartbeat.closeSent()
                // The app answers with its own close; it has a moment to.
                try await Task.sleep(for: .seconds(2))
                return
            }
        }
    }

    private func beat(_ heartbeat: HeartbeatState) async throws {
        while true {
            try await Task.sleep(for: .seconds(settings.heartbeat))
            guard heartbeat.ping() else {
                socket.close(code: LiveCloseCode.heartbeatMissed, reason: "no answer to the heartbeat")
                try await Task.sleep(for: .seconds(3))
                return
            }
            socket.sendControl(.ping)
        }
    }

    private func read(_ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>, heartbeat: HeartbeatState) async throws {
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
                heartbeat.pong()
            case .connectionClose:
                // The app closes: answer with its code (unless this side closed first).
                if !heartbeat.hasSentClose {
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

/// Whether the last ping was answered, and whether a close went out.
final class HeartbeatState: Sendable {
    private struct State {
        var awaitingPong = false
        var closeSent = false
    }

    private let state = Mutex(State())

    /// Before a ping: false when the previous one was never answered.
    func ping() -> Bool {
        state.withLock { state in
            defer { state.awaitingPong = true }
            return !state.awaitingPong
        }
    }

    func pong() {
        state.withLock { $0.awaitingPong = false }
    }

    func closeSent() {
        state.withLock { $0.closeSent = true }
    }

    var hasSentClose: Bool { state.withLock { $0.closeSent } }
}
