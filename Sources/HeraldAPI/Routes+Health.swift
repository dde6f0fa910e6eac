import HeraldMetrics
import HeraldStore
import Hummingbird

extension HeraldAPI {
    /// `GET /healthz` and `GET /readyz` (`HealthRoutes`, asking `notReadyReason`), and the
    /// contract.
    func addHealth(to router: Router<APIContext>) {
        HealthRoutes.add(to: router, logger: logger, notReadyReason: notReadyReason)
        // The contract (openapi/openapi.json, compiled in).
        router.get("openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: EmbeddedFiles.openapi["openapi.json"] ?? "{}")))
        }
    }
}
