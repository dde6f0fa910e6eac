import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOHTTPTypesHTTP2

/// The emulator's cleartext listeners, h2c (prior knowledge) or HTTP/1.1, answered on the
/// connection's event loop by `EmulatorStreamHandler`, as its HTTPS listener's HTTP/2 streams
/// are. Served through Hummingbird, their requests waited for threads shared by every
/// emulator in the process (`EmulatorExecutor`): while one test drove thousands of sends, a
/// `herald push test` beside it got no answer from its own emulator's token endpoint within
/// 20 s. Each emulator's loops are its own (`EmulatorLoopPool`), so now one emulator's load
/// only ever delays itself, as with real, separate servers.
struct EmulatorLoopChannel: ServerChildChannel {
    enum Wire: Sendable { case http1, h2c }

    struct Value: ServerChildChannelValue {
        let channel: any Channel
    }

    let wire: Wire
    let responder: EmulatorResponder

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        switch wire {
        case .http1:
            return channel.eventLoop.makeCompletedFuture {
                try Self.configureHTTP1(channel, responder: responder)
                return Value(channel: channel)
            }
        case .h2c:
            return Self.configureHTTP2(channel, responder: responder).map { _ in Value(channel: channel) }
        }
    }

    /// The connection is served on its loop; this only waits for it to close.
    func handle(value: Value, logger: Logger) async {
        try? await value.channel.closeFuture.get()
    }

    /// An HTTP/1.1 connection (keep-alive, pipelined requests answered in order).
    static func configureHTTP1(_ channel: any Channel, responder: EmulatorResponder) throws {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
        try pipeline.addHandlers([HTTP1ToHTTPServerCodec(secure: false), EmulatorStreamHandler(responder: responder)])
    }

    /// An HTTP/2 connection, each stream answered by a handler of its own.
    static func configureHTTP2(_ channel: any Channel, responder: EmulatorResponder) -> EventLoopFuture<NIOHTTP2Handler.StreamMultiplexer> {
        let configuration = EmulatorTLSChannel.http2Configuration
        return channel.configureHTTP2Pipeline(
            mode: .server, connectionConfiguration: configuration.connection, streamConfiguration: configuration.stream
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandlers([HTTP2FramePayloadToHTTPServerCodec(), EmulatorStreamHandler(responder: responder)])
            }
        }
    }
}
