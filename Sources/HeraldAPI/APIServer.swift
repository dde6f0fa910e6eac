import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import Logging
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

    public init(api: HeraldAPI, host: String, port: Int, tls: TLSFiles?) {
        self.api = api
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// The application, a `Service` for a `ServiceGroup` (SIGTERM: stop accepting, finish
    /// the requests in flight). `onRunning` gets the base URL once it listens (port 0 picks one).
    public func application(onRunning: @escaping @Sendable (String) async -> Void = { _ in }) throws -> some ApplicationProtocol {
        let server: HTTPServerBuilder
        let scheme: String
        if let tls {
            let configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(tls.certificateChain).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: tls.privateKey, format: .pem)))
            server = try .http2Upgrade(tlsConfiguration: configuration)
            scheme = "https"
        } else {
            server = .http1()
            scheme = "http"
        }
        let host = host
        return Application(
            router: api.router(), server: server, configuration: .init(address: .hostname(host, port: port), serverName: "herald"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                let shownHost = host.contains(":") ? "[\(host)]" : host
                await onRunning("\(scheme)://\(shownHost):\(port)")
            },
            logger: api.logger)
    }
}
