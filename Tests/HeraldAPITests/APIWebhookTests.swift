import Foundation
import HeraldTestSupport
import Testing

/// `POST /v1/webhooks` with URLs a tenant should not be able to register.
@Suite struct APIWebhookTests {
    /// A URL that grew when percent-encoded broke the length check on what was stored: a 500.
    @Test(arguments: [
        "https://hooks.example.com/" + String(repeating: "é", count: 1_000), "https://hooks.example.com/" + String(repeating: "^", count: 2_000),
        "https://hooks.example.com/a\r\nb", "https://hooks.example.com/%zz", "https://127.1/in", "https://[fe80::1%25lo]/",
        "https://hooks.example.com:99999/"
    ])
    func aURLThatIsNotOneAsWrittenIsA422NamingIt(url: String) async throws {
        try await APIHarness.with { api in
            let key = try await api.key()
            let reply = try await api.call("POST", "/v1/webhooks", token: key, json: ["url": url, "events": ["activity.*"]])
            #expect(reply.status == 422 && reply.isProblem, "\(reply.status)")
            let fields = (reply.json["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
            #expect(fields == ["url"])
            #expect(try await api.count("webhook_endpoints") == 0)
        }
    }

    @Test func aURLIsStoredAsGiven() async throws {
        try await APIHarness.with { api in
            let key = try await api.key()
            let url = "https://hooks.example.com/in/%E2%9C%93?tenant=acme"
            let reply = try await api.call("POST", "/v1/webhooks", token: key, json: ["url": url, "events": ["activity.*"]])
            #expect(reply.status == 201 && reply.json["url"] as? String == url)
        }
    }
}
