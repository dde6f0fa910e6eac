import Foundation
import HeraldAPI
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// `/healthz` and `/readyz` (the same routes as a worker's probes): a server that cannot work
/// says why in a problem document.
@Suite struct APIHealthTests {
    @Test func aServerThatCannotWorkSaysWhyInAProblemDocument() async throws {
        try await APIHarness.with { api in
            let notReady = HeraldAPI(store: api.store, logger: testLogger, notReadyReason: { "stopping" })
            try await Application(router: notReady.router()).test(.router) { client in
                let health = try await client.execute(uri: "/healthz", method: .get)
                #expect(health.status == .ok)
                let ready = try await client.execute(uri: "/readyz", method: .get)
                #expect(ready.status == .serviceUnavailable)
                #expect(ready.headers[.contentType] == "application/problem+json")
                let problem = try #require(try JSONSerialization.jsonObject(with: Data(buffer: ready.body)) as? [String: Any])
                #expect(problem["status"] as? Int == 503 && problem["title"] as? String == "Not ready")
                #expect(problem["detail"] as? String == "stopping")
            }
        }
    }
}
