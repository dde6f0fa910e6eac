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
/// it), like FCM and APNs, every request answered on the connection's event loop.
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
    typealias Negotiated = NIONegotiatedHTTPVersion<Void, NIOHTTP2Handler.StreamMultiplexer>

    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        let channel: any Channel
    }

    let sslContext: NIOSSLContext
    /// For HTTP/2 streams and HTTP/1.1 connections: each records the version it served.
    let http2Responder: EmulatorResponder
    let http1Responder: EmulatorResponder

    init(tlsConfiguration: TLSConfiguration, offersHTTP2: Bool, emulator: Emulator) throws {
        var tlsConfiguration = tlsConfiguration
        tlsConfiguration.applicationProtocols = offersHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"]
        sslContext = try NIOSSLContext(configuration: tlsConfiguration)
        http2Responder = EmulatorResponder(emulator: emulator, httpVersion: "2")
        http1Responder = EmulatorResponder(emulator: emulator, httpVersion: "1.1")
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
            HTTP2Setting(parameter: .initialWindowSize, value: Self.streamWindow)
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
        // ALPN decides: h2 gets the tuned HTTP/2 pipeline, http/1.1 (or no choice) an HTTP/1.1
        // one; either is answered on the loop (`EmulatorStreamHandler`).
        let http1Responder = http1Responder
        let http2Responder = http2Responder
        let negotiation = NIOTypedApplicationProtocolNegotiationHandler<Negotiated> { result in
            switch result {
            case .negotiated("h2"):
                return EmulatorLoopChannel.configureHTTP2(channel, responder: http2Responder).map { .http2($0) }
            case .negotiated("http/1.1"), .fallback:
                return channel.eventLoop.makeCompletedFuture {
                    try EmulatorLoopChannel.configureHTTP1(channel, responder: http1Responder)
                    return .http1_1(())
                }
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
            _ = try await value.negotiated.get()
            // Either way the requests are answered on the loop; the connection is served until it closes.
            try await value.channel.closeFuture.get()
        } catch {
            logger.debug("emulator connection ended", metadata: ["error": "\(error)"])
        }
    }
}
