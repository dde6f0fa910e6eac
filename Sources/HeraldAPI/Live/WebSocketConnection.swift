import HeraldLive
import NIOCore
import NIOWebSocket

/// A live socket's connection as SwiftNIO's WebSocket channel: frames written on the channel's
/// event loop (at once when already there, so that nothing overtakes them: an error, then the
/// close).
struct WebSocketConnection: LiveConnection {
    let channel: any Channel

    func write(_ texts: [String], written: @escaping @Sendable () -> Void) {
        let channel = self.channel
        let body: @Sendable () -> Void = {
            for text in texts.dropLast() {
                channel.write(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text)), promise: nil)
            }
            guard let last = texts.last else { return written() }
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: last))).whenComplete { _ in written() }
        }
        if channel.eventLoop.inEventLoop { body() } else { channel.eventLoop.execute(body) }
    }

    func ping() {
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(string: "herald")), promise: nil)
    }

    func pong(_ data: [UInt8]) {
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .pong, data: ByteBuffer(bytes: data)), promise: nil)
    }

    /// The app has two seconds to answer with its own close (`LiveFrameHandler` ends the
    /// connection when it does).
    func close(code: UInt16, reason: String, answering: Bool) {
        var data = ByteBuffer()
        data.write(webSocketErrorCode: WebSocketErrorCode(codeNumber: Int(code)))
        data.writeString(reason)
        let channel = self.channel
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)).whenComplete { _ in
            if answering {
                channel.close(promise: nil)
            } else {
                channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
            }
        }
    }

    func drop() {
        channel.close(promise: nil)
    }
}
