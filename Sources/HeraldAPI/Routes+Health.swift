import HeraldStore
import Hummingbird

extension HeraldAPI {
    /// `GET /healthz`: the process answers. `GET /readyz`: the database answers and its
    /// schema is the one this binary expects (503 otherwise).
    func addHealth(to router: Router<APIContext>) {
        router.get("healthz") { _, _ in
            try JSONBody.response(["status": "ok"])
        }
        // The contract (openapi/openapi.json, compiled in).
        router.get("openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: EmbeddedFiles.openapi["openapi.json"] ?? "{}")))
        }
        router.get("readyz") { _, _ in
            do {
                try await store.verifySchema()
            } catch {
                logger.warning("not ready", metadata: ["reason": "\(error)"])
                throw Problem(.serviceUnavailable, "Not ready", detail: "the database is unreachable or its schema is not current")
            }
            return try JSONBody.response(["status": "ready"])
        }
    }
}
