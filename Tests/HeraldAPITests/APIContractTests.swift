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
            let documented = Set(
                paths.flatMap { path, operations in
                    operations.keys.filter { ["get", "post", "put", "patch", "delete"].contains($0) }.map { "\($0.uppercased()) \(path)" }
                })
            let routes = Set(HeraldAPI(store: api.store, logger: testLogger).operations)
            #expect(routes.subtracting(documented).isEmpty, "routes without documentation: \(routes.subtracting(documented).sorted())")
            #expect(documented.subtracting(routes).isEmpty, "documented but not served: \(documented.subtracting(routes).sorted())")
        }
    }

    /// One spelling for every name a client reads or sends: camelCase with `Id` and `Url`
    /// (requests took `clientId` while answers said `clientID`, `eventID`, `photoURL`).
    @Test func everyNameIsCamelCaseWithIdAndUrl() async throws {
        try await APIHarness.with { api in
            let served = try await api.call("GET", "/openapi.json", token: nil)
            var names: [String] = []
            func walk(_ value: Any) {
                if let object = value as? [String: Any] {
                    if let properties = object["properties"] as? [String: Any] { names += properties.keys }
                    object.values.forEach(walk)
                } else if let array = value as? [Any] {
                    array.forEach(walk)
                }
            }
            walk(served.json)
            #expect(!names.isEmpty)
            let shouting = names.filter { $0.hasSuffix("ID") || $0.hasSuffix("IDs") || $0.hasSuffix("URL") }
            #expect(shouting.isEmpty, "\(Set(shouting).sorted())")

            // And the answers say what the document says.
            let chidi = try await api.token("chidi@acme.test")
            let direct = try await api.call("POST", "/v1/conversations", token: chidi, json: ["with": ["dana@acme.test"]])
            let id = try #require(direct.json["id"] as? String)
            let sent = try await api.call("POST", "/v1/conversations/\(id)/messages", token: chidi, json: ["text": "hi", "clientId": "c-9"])
            #expect(sent.json["clientId"] as? String == "c-9" && sent.json["clientID"] == nil, "\(String(decoding: sent.body, as: UTF8.self))")
        }
    }
}
