import HeraldStore
import Hummingbird

extension HeraldAPI {
    /// `GET /healthz`: the process answers. `GET /readyz`: the database answers and its
    /// schema is the one this binary expects (503 otherwise).
    func addHealth(to router: Router<APIContext>) {
        router.get("healthz") { _, _ in
            try JSONBody.response(["status": "ok"])
        }
        router.get("readyz") { _, _ in
            do {
                try await Migrator.bundled().verify(store.pool)
            } catch {
                logger.warning("not ready", metadata: ["reason": "\(error)"])
                throw Problem(.serviceUnavailable, "Not ready", detail: "the database is unreachable or its schema is not current")
            }
            return try JSONBody.response(["status": "ready"])
        }
    }
}
