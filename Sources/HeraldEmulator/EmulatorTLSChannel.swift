import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP2
import NIOHTTPTypes
import NIOHTTPTypesHTTP2
import NIOSSL
import NIOTLS

/// The emulator's HTTPS listener: TLS with ALPN, HTTP/2 (or HTTP/1.1 when the client asks for
/// it), like FCM and APNs.
///
/// It exists because swift-nio-http2's default abuse limits do not suit a load generator:
/// libcurl 7.88 (Debian 12) resets a stream it has finished with whenever the stream is not
/// closed yet on its side ("premature DATA_DONE, RST stream"), about once every few requests,
/// and swift-nio-http2 ends a connection with GOAWAY ENHANCE_YOUR_CALM after 200 resets in 30
/// seconds (`NIOHTTP2Errors.ExcessiveRSTFrames`). libcurl then resends every request in
/// flight, so a burst saw duplicates and dozens of connections. Hummingbird's own HTTP/2
/// channel does not let the limits be set; this one raises them (Google's and Apple's
/// servers are not this strict with their clients) and serves the same responder.
struct EmulatorTLSChannel: ServerChildChannel {
    typealias StreamChannel = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>
    typealias Negotiated = NIONegotiatedHTTPVersion<HTTP1Channel.Value, NIOHTTP2Handler.AsyncStreamMultiplexer<StreamChannel>>

    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        let channel: any Channel
    }

    let sslContext: NIOSSLContext
    let http1: HTTP1Channel
    let responder: EmulatorResponder

    init(
        tlsConfiguration: TLSConfiguration, offersHTTP2: Bool, responder: EmulatorResponder,
        hummingbirdResponder: @escaping HTTPChannelHandler.Responder
    ) throws {
        var tlsConfiguration = tlsConfiguration
        tlsConfiguration.applicationProtocols = offersHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"]
        sslContext = try NIOSSLContext(configuration: tlsConfiguration)
        http1 = HTTP1Channel(responder: hummingbirdResponder)
        self.responder = responder
    }

    static var http2Configuration: NIOHTTP2Handler.Configuration {
        var configuration = NIOHTTP2Handler.Configuration()
        configuration.connection.maximumConnectionGlitches = 1_000_000
        configuration.connection.maximumRecentlyResetStreams = 10_000
        configuration.stream.streamResetFrameRateLimit.maximumCount = 1_000_000
        configuration.stream.streamResetFrameRateLimit.windowLength = .seconds(1)
        configuration.stream.streamErrorRateLimit.maximumCount = 1_000_000
        configuration.stream.streamErrorRateLimit.windowLength = .seconds(1)
        configuration.connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 1_000),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16_384),
            HTTP2Setting(parameter: .initialWindowSize, value: Self.streamWindow),
        ]
        // Flow-control windows far above HTTP/2's 64 KB default, as large servers grant: with
        // the default, a connection whose window was spent by 80-99 bodies of 4 KB in flight
        // at once stopped getting WINDOW_UPDATEs from swift-nio-http2 while the emulator's
        // threads sat idle, in about one full test run of three (the large-answer test); the
        // client's side of a spent window is tested on its own, through a relay.
        configuration.connection.targetWindowSize = 16 << 20
        configuration.stream.targetWindowSize = Self.streamWindow
        return configuration
    }

    /// Each stream's flow-control window (1 MB; the emulator takes bodies up to 1 MB).
    static let streamWindow = 1 << 20

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        // ALPN decides: h2 gets the tuned HTTP/2 pipeline, http/1.1 (or no choice) Hummingbird's HTTP/1.1 channel.
        let negotiation = NIOTypedApplicationProtocolNegotiationHandler<Negotiated> { result in
            switch result {
            case .negotiated("h2"):
                return channel.configureAsyncHTTP2Pipeline(mode: .server, configuration: Self.http2Configuration) { stream in
                    stream.eventLoop.makeCompletedFuture {
                        try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTPServerCodec())
                        return try StreamChannel(wrappingChannelSynchronously: stream)
                    }
                }.map { .http2($0) }
            case .negotiated("http/1.1"), .fallback:
                return self.http1.setup(channel: channel, logger: logger).map { .http1_1($0) }
            case .negotiated:
                return channel.close().flatMap { channel.eventLoop.makeFailedFuture(NIOHTTP2Errors.invalidALPNToken()) }
            }
        }
        do {
            try channel.pipeline.syncOperations.addHandler(negotiation)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return channel.eventLoop.makeSucceededFuture(Value(negotiated: negotiation.protocolNegotiationResult, channel: channel))
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http1_1(let connection):
                await http1.handle(value: connection, logger: logger)
            case .http2(let multiplexer):
                try await withThrowingDiscardingTaskGroup { group in
                    for try await stream in multiplexer.inbound {
                        group.addTask { await self.serve(stream, logger: logger) }
                    }
                }
            }
        } catch {
            logger.debug("emulator connection ended", metadata: ["error": "\(error)"])
        }
    }

    /// One request on one stream: read it whole, answer it whole.
    private func serve(_ stream: StreamChannel, logger: Logger) async {
        do {
            try await stream.executeThenClose { inbound, outbound in
                var parts = inbound.makeAsyncIterator()
                guard case .head(let head)? = try await parts.next() else { return }
                var body = ByteBuffer()
                reading: while let part = try await parts.next() {
                    switch part {
                    case .body(var chunk): body.writeBuffer(&chunk)
                    case .end: break reading
                    case .head: return
                    }
                }
                let context = BasicRequestContext(source: ApplicationRequestContextSource(channel: stream.channel, logger: logger))
                let response = try await responder.respond(to: Request(head: head, body: .init(buffer: body)), context: context)
                let collector = CollectedBody()
                try await response.body.write(collector)
                try await outbound.write(.head(response.head))
                for chunk in collector.buffers { try await outbound.write(.body(chunk)) }
                try await outbound.write(.end(nil))
                // The stream closes by itself once the end has left (both sides ended).
                // Closing it here instead would reset it with CANCEL while a large answer
                // (the message list of a long bench) still sits in its buffers.
                try await stream.channel.closeFuture.get()
            }
        } catch {
            logger.debug("emulator stream ended", metadata: ["error": "\(error)"])
        }
    }
}

/// Gathers a response body in memory (the emulator's answers are small).
final class CollectedBody: ResponseBodyWriter, @unchecked Sendable {
    // Safety: used by one task at a time, within one request.
    private(set) var buffers: [ByteBuffer] = []

    func write(_ buffer: ByteBuffer) async throws {
        buffers.append(buffer)
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
