import Foundation
import Hummingbird
import Logging

/// `GET /healthz` (the process answers) and `GET /readyz` (it can work: 503 otherwise), the
/// same on every server Herald runs: `herald serve` and the probes of `herald worker --metrics`.
/// A server that is not ready says why in an RFC 9457 problem document.
public enum HealthRoutes {
    /// - Parameter notReadyReason: nil when ready, otherwise why not (in words an operator
    ///   can act on; no secret).
    public static func add<Context: RequestContext>(
        to router: Router<Context>, logger: Logger, notReadyReason: @escaping @Sendable () async -> String?
    ) {
        router.get("healthz") { _, _ in json(.ok, ["status": "ok"]) }
        router.get("readyz") { _, _ -> Response in
            guard let reason = await notReadyReason() else { return json(.ok, ["status": "ready"]) }
            logger.warning("not ready", metadata: ["reason": "\(reason)"])
            let problem: [String: Any] = [
                "type": "https://herald.invalid/problems/503", "title": "Not ready", "status": 503, "detail": reason
            ]
            let body = (try? JSONSerialization.data(withJSONObject: problem, options: [.sortedKeys])) ?? Data()
            return Response(
                status: .serviceUnavailable, headers: [.contentType: "application/problem+json"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
    }

    static func json(_ status: HTTPResponse.Status, _ object: [String: String]) -> Response {
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
