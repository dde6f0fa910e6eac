import Foundation
import HeraldLive
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOSSL

/// `herald serve`'s listener: HTTP/1.1 in the clear, or with a certificate HTTP/2 and
/// HTTP/1.1 over TLS (negotiated by ALPN).
public struct APIServer: Sendable {
    public struct TLSFiles: Sendable {
        public let certificateChain: String
        public let privateKey: String

        public init(certificateChain: String, privateKey: String) {
            self.certificateChain = certificateChain
            self.privateKey = privateKey
        }
    }

    let api: HeraldAPI
    let host: String
    let port: Int
    let tls: TLSFiles?
    let connections: ConnectionLimits

    public init(api: HeraldAPI, host: String, port: Int, tls: TLSFiles?, connections: ConnectionLimits = ConnectionLimits()) {
        self.api = api
        self.host = host
        self.port = port
        self.tls = tls
        self.connections = connections
    }

    /// Raises this process's limit on open files to the most it may have (the usual soft
    /// limit, 1,024, is a few hundred idle sockets from exhaustion). - Returns: the limit now.
    @discardableResult
    public static func raiseFileLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return UInt64(limit.rlim_cur)
    }

    /// What keeps this server from listening, as one line (`cannot listen on 127.0.0.1:8080:
    /// address already in use`), when `error` is why it could not start; nil for anything else.
    public func listenFailure(_ error: any Error) -> String? {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let reason: String
        switch error {
        case let error as IOError where error.description.hasPrefix("bind("):
            reason = String(cString: strerror(error.errnoCode)).lowercased()
        case let error as SocketAddressError.UnknownHost:
            reason = "the host name cannot be resolved (\(error.errorDescription.lowercased()))"
        case SocketAddressError.unsupported:
            reason = "the address family is not supported"
        default:
            return nil
        }
        return "cannot listen on \(shownHost):\(port): \(reason)"
    }

    /// The application, a `Service` for a `ServiceGroup` (SIGTERM: stop accepting, finish
    /// the requests in flight). `onRunning` gets the base URL once it listens (port 0 picks one).
    public func application(onRunning: @escaping @Sendable (String) async -> Void = { _ in }) throws -> some ApplicationProtocol {
        let server: HTTPServerBuilder
        let scheme: String
        let limits = connections
        let byAddress = ConnectionsByAddress()
        let router = api.router()
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ParseErrorAnswer(), RequestDeadline(timeout: TimeAmount(limits.requestTimeout))],
            idleTimeout: TimeAmount(limits.idleTimeout))
        let preflight = router.buildResponder()
        let hub = api.live
        let live = { @Sendable (responder: @escaping HTTPChannelHandler.Responder, isTLS: Bool) in
            LiveUpgradeChannel(
                responder: responder, configuration: http1, preflight: { try await preflight.respond(to: $0, context: $1) }, hub: hub,
                isTLS: isTLS)
        }
        if let tls {
            let configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(tls.certificateChain).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: tls.privateKey, format: .pem)))
            let http2 = HTTP2ChannelConfiguration(idleTimeout: limits.idleTimeout, streamConfiguration: http1)
            server = HTTPServerBuilder { responder in
                GuardedChannel(
                    inner: try LiveTLSChannel(
                        configuration: configuration, http1: live(responder, true), http2: HTTP2Channel(responder: responder, configuration: http2)),
                    limits: limits, connections: byAddress, isTLS: true)
            }
            scheme = "https"
        } else {
            server = HTTPServerBuilder { responder in
                GuardedChannel(inner: live(responder, false), limits: limits, connections: byAddress, isTLS: false)
            }
            scheme = "http"
        }
        let host = host
        return Application(
            router: router, server: server, configuration: .init(address: .hostname(host, port: port), serverName: "herald"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                let shownHost = host.contains(":") ? "[\(host)]" : host
                await onRunning("\(scheme)://\(shownHost):\(port)")
            },
            logger: api.logger)
    }
}
