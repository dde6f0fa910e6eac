import Foundation
import Hummingbird
import Logging

/// `herald worker --metrics HOST:PORT`: `/metrics`, `/healthz` (the process answers) and
/// `/readyz` (`ready` says it can work: 503 otherwise), plain HTTP/1.1.
public struct ProbeServer: Sendable {
    let host: String
    let port: Int
    let metrics: MetricsEndpoint
    let ready: @Sendable () async -> String?
    let logger: Logger

    /// - Parameter ready: nil when ready, otherwise why not.
    public init(host: String, port: Int, metrics: MetricsEndpoint, logger: Logger, ready: @escaping @Sendable () async -> String?) {
        self.host = host
        self.port = port
        self.metrics = metrics
        self.ready = ready
        self.logger = logger
    }

    /// `HOST:PORT` (`[::1]:9464` for IPv6).
    /// - Returns: nil for anything else.
    public static func address(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(" ") else { return nil }
        return (host, port)
    }

    public func application(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let router = Router()
        metrics.add(to: router)
        HealthRoutes.add(to: router, logger: logger, notReadyReason: ready)
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "herald-worker"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }
}
