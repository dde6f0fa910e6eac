import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL
import NIOTLS

/// TLS with ALPN: HTTP/2 (Hummingbird's), or HTTP/1.1 with the live channel's WebSocket
/// upgrade (`LiveUpgradeChannel`); a WebSocket is an HTTP/1.1 upgrade, so browsers and apps
/// open `wss://…/v1/live` over HTTP/1.1 while their other requests may use HTTP/2.
struct LiveTLSChannel: ServerChildChannel {
    enum Negotiated: Sendable {
        case http1(LiveUpgradeChannel.Value)
        case http2(HTTP2Channel.Value)
    }

    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        let channel: any Channel
    }

    let context: NIOSSLContext
    let http1: LiveUpgradeChannel
    let http2: HTTP2Channel

    /// - Parameter configuration: the server's TLS configuration; ALPN offers h2 and http/1.1.
    init(configuration: TLSConfiguration, http1: LiveUpgradeChannel, http2: HTTP2Channel) throws {
        var configuration = configuration
        configuration.applicationProtocols = ["h2", "http/1.1"]
        self.context = try NIOSSLContext(configuration: configuration)
        self.http1 = http1
        self.http2 = http2
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
            let negotiation = NIOTypedApplicationProtocolNegotiationHandler<Negotiated> { result, channel in
                switch result {
                case .negotiated("h2"): http2.setup(channel: channel, logger: logger).map { .http2($0) }
                default: http1.setup(channel: channel, logger: logger).map { .http1($0) }
                }
            }
            try channel.pipeline.syncOperations.addHandler(negotiation)
            return Value(negotiated: negotiation.protocolNegotiationResult, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http1(let http1Value): await http1.handle(value: http1Value, logger: logger)
            case .http2(let http2Value): await http2.handle(value: http2Value, logger: logger)
            }
        } catch {
            logger.debug("TLS negotiation ended", metadata: ["error": "\(error)"])
        }
    }
}
