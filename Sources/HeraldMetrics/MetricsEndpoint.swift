import Crypto
import Foundation
import Hummingbird

/// `GET /metrics`: the Prometheus text of `MetricsRegistry`, behind a bearer token when one
/// is set (`HERALD_METRICS_TOKEN`; Prometheus sends it with `authorization: credentials_file`).
public struct MetricsEndpoint: Sendable {
    let token: String?

    public init(token: String?) {
        self.token = token.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The token from the environment, if any.
    public static func token(from environment: [String: String]) -> String? {
        environment["HERALD_METRICS_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
    }

    public func add<Context: RequestContext>(to router: Router<Context>) {
        router.get("metrics") { request, _ -> Response in
            guard authorized(request.headers[.authorization]) else {
                return Response(
                    status: .unauthorized,
                    headers: [.wwwAuthenticate: "Bearer realm=\"metrics\"", .contentType: "text/plain; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: "a bearer token (HERALD_METRICS_TOKEN) is required\n")))
            }
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: MetricsRegistry.render())))
        }
    }

    /// Compared as digests, so the time taken says nothing about the token.
    func authorized(_ header: String?) -> Bool {
        guard let token else { return true }
        guard let header, header.lowercased().hasPrefix("bearer ") else { return false }
        let presented = SHA256.hash(data: Data(header.dropFirst("bearer ".count).utf8))
        return presented == SHA256.hash(data: Data(token.utf8))
    }
}
