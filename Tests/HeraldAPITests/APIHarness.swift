import Foundation
import HeraldAPI
import HeraldCore
import HeraldHTTP
@testable import HeraldStore
import HeraldTestSupport
import Hummingbird

/// `herald serve`'s application on a throwaway database, listening on a free port, and a
/// real HTTP client (libcurl) to call it. Tenant `acme`: Alice manages team ops, Chidi and
/// Dana are its members (see `addAcmePeople`); tenant `globex` has a Chidi of its own.
struct APIHarness: Sendable {
    let store: Store
    let acme: Tenant
    let globex: Tenant
    let base: String
    let http: HTTPClient

    struct Reply: Sendable {
        let status: Int
        let headers: [String: String]
        let body: [UInt8]

        /// The body as a JSON object (empty when it is not one).
        var json: [String: Any] {
            ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:]
        }
        var items: [[String: Any]] { (json["items"] as? [[String: Any]]) ?? [] }
        var isProblem: Bool { headers["content-type"] == "application/problem+json" && json["status"] as? Int == status }
    }

    static func with(
        limits: RateLimits = RateLimits(), connections: ConnectionLimits = ConnectionLimits(), tls: APIServer.TLSFiles? = nil,
        _ body: @Sendable (APIHarness) async throws -> Void
    ) async throws {
        try await TestDatabase.withStore(poolSize: 4) { store, _ in
            let acme = try await store.createTenant(slug: "acme", name: "Acme")
            try await store.withTenant(acme) { session in
                try await addAcmePeople(session)
            }
            let globex = try await store.createTenant(slug: "globex", name: "Globex")
            try await store.withTenant(globex) { session in
                _ = try await session.createTeam(slug: "ops", name: "Ops")
                _ = try await session.addPerson(email: "chidi@acme.test", name: "Another Chidi")
            }
            let server = APIServer(
                api: HeraldAPI(store: store, limits: limits, logger: testLogger), host: "127.0.0.1", port: 0, tls: tls, connections: connections)
            let (addresses, announce) = AsyncStream.makeStream(of: String.self)
            let application = try server.application { announce.yield($0) }
            let http = try HTTPClient(configuration: .init(maxInFlight: 8), logger: testLogger)
            defer { http.shutdown() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await application.runService() }
                var iterator = addresses.makeAsyncIterator()
                guard let base = await iterator.next() else { throw CancellationError() }
                defer { group.cancelAll() }
                try await body(APIHarness(store: store, acme: acme, globex: globex, base: base, http: http))
            }
        }
    }

    /// A person token for `email` in `tenant` (acme by default).
    func token(_ email: String, in tenant: Tenant? = nil, lifetime: Duration? = nil) async throws -> String {
        try await store.withTenant(tenant ?? acme) {
            try await $0.createPersonToken(for: email, name: nil, lifetime: lifetime, by: "test").secret
        }
    }

    /// A tenant key of acme.
    func key() async throws -> String {
        try await store.withTenant(acme) { try await $0.createTenantKey(name: "backend", lifetime: nil, by: "test").secret }
    }

    /// Calls the API; `json` is sent as the body (with its content type) unless `raw` is given.
    func call(
        _ method: String, _ path: String, token: String?, json: [String: Any]? = nil, raw: [UInt8]? = nil,
        headers: [(name: String, value: String)] = []
    ) async throws -> Reply {
        var all = headers
        if let token { all.append(("Authorization", "Bearer \(token)")) }
        var body: [UInt8] = raw ?? []
        if let json {
            body = Array(try JSONSerialization.data(withJSONObject: json))
        }
        if (json != nil || raw != nil) && !all.contains(where: { $0.name.lowercased() == "content-type" }) {
            all.append(("Content-Type", "application/json"))
        }
        let response = try await http.send(HeraldHTTP.HTTPRequest(method: method, url: base + path, headers: all, body: body, timeout: .seconds(30)))
        return Reply(status: response.status, headers: response.headers, body: response.body)
    }

    /// Rows of a table in acme (to check that a refusal wrote nothing).
    func count(_ table: String) async throws -> Int {
        try await store.withTenant(acme) {
            try await $0.connection.query("SELECT count(*) FROM \(identifier: table)").single().decode(Int.self, at: 0)
        }
    }
}
