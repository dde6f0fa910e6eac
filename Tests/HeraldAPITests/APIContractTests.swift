import Foundation
import HeraldAPI
import HeraldTestSupport
import Testing

/// openapi/openapi.json is the contract: served as it is, and naming exactly the routes
/// the server has.
@Suite struct APIContractTests {
    @Test func theDocumentIsServedAndNamesEveryRouteAndNoOther() async throws {
        try await APIHarness.with { api in
            let served = try await api.call("GET", "/openapi.json", token: nil)
            #expect(served.status == 200 && served.json["openapi"] as? String == "3.1.0")
            let paths = try #require(served.json["paths"] as? [String: [String: Any]])
            let documented = Set(paths.flatMap { path, operations in
                operations.keys.filter { ["get", "post", "put", "patch", "delete"].contains($0) }.map { "\($0.uppercased()) \(path)" }
            })
            let routes = Set(HeraldAPI(store: api.store, logger: testLogger).operations)
            #expect(routes.subtracting(documented).isEmpty, "routes without documentation: \(routes.subtracting(documented).sorted())")
            #expect(documented.subtracting(routes).isEmpty, "documented but not served: \(documented.subtracting(routes).sorted())")
        }
    }
}
