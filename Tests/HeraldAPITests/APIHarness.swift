import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldDispatch
import HeraldEmulator
import HeraldHTTP
import HeraldLive
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore

@testable import HeraldStore

/// `herald serve`'s application on a throwaway database. Tenant `acme`: Alice manages team
/// ops, Chidi and Dana are its members (see `addAcmePeople`); tenant `globex` has a Chidi of
/// its own.
///
/// By default requests go to the application's router in-process (HummingbirdTesting's
/// `.router`): the routes, middleware and problem documents, with no socket. `.live` runs the
/// real server on a free port and calls it with a real HTTP client (libcurl), for what only a
/// server does: connection limits, timeouts, TLS, requests the HTTP parser refuses; with `hub`,
/// the live channel's loops run too, for sockets that are given the feed.
struct APIHarness: Sendable {
    enum Transport: Sendable {
        case router
        case live
    }

    let store: Store
    let acme: Tenant
    let globex: Tenant
    /// The server's URL (`.live` only; empty otherwise).
    let base: String
    /// The live channel's hub of the server.
    let live: LiveHub
    /// The server's credential cache (it answers only while a test runs it).
    let credentials: CredentialCache
    private let send: @Sendable (_ method: String, _ path: String, _ headers: [(name: String, value: String)], _ body: [UInt8]) async throws -> Reply

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
        _ transport: Transport = .router, limits: RateLimits = RateLimits(), connections: ConnectionLimits = ConnectionLimits(),
        tls: APIServer.TLSFiles? = nil, live: LiveSettings = LiveSettings(), hub: Bool = false, webPush: WebPushSettings = WebPushSettings(),
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
            let api = HeraldAPI(store: store, limits: limits, logger: testLogger, live: live, webPush: webPush)
            let server = APIServer(api: api, host: "127.0.0.1", port: 0, tls: tls, connections: connections)
            switch transport {
            case .router:
                try await server.application().test(.router) { client in
                    try await body(
                        APIHarness(store: store, acme: acme, globex: globex, base: "", live: api.live, credentials: api.credentials) {
                            method, path, headers, bytes in
                            var fields = HTTPFields()
                            for (name, value) in headers {
                                guard let name = HTTPField.Name(name) else { continue }
                                fields.append(HTTPField(name: name, value: value))
                            }
                            let response = try await client.execute(
                                uri: path, method: HTTPRequest.Method(method) ?? .get, headers: fields,
                                body: bytes.isEmpty ? nil : ByteBuffer(bytes: bytes))
                            var replyHeaders: [String: String] = [:]
                            for field in response.headers {
                                let name = field.name.canonicalName.lowercased()
                                replyHeaders[name] = replyHeaders[name].map { $0 + ", " + field.value } ?? field.value
                            }
                            return Reply(status: Int(response.status.code), headers: replyHeaders, body: Array(buffer: response.body))
                        })
                }
            case .live:
                let (addresses, announce) = AsyncStream.makeStream(of: String.self)
                let application = try server.application { announce.yield($0) }
                let http = try HTTPClient(configuration: .init(maxInFlight: 8), logger: testLogger)
                defer { http.shutdown() }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await application.runService() }
                    // The live channel's loops, as `herald serve` runs them beside the server.
                    if hub { group.addTask { try await api.live.run() } }
                    var iterator = addresses.makeAsyncIterator()
                    guard let base = await iterator.next() else { throw CancellationError() }
                    defer { group.cancelAll() }
                    try await body(
                        APIHarness(store: store, acme: acme, globex: globex, base: base, live: api.live, credentials: api.credentials) {
                            method, path, headers, bytes in
                            let response = try await http.send(
                                HeraldHTTP.HTTPRequest(method: method, url: base + path, headers: headers, body: bytes, timeout: .seconds(30)))
                            return Reply(status: response.status, headers: response.headers, body: response.body)
                        })
                }
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
        return try await send(method, path, all, body)
    }

    /// Fans out and sends what the requests so far raised: a dispatcher until nothing is
    /// due, its providers pointed at an emulator of their own.
    func dispatch() async throws {
        try await Emulator.withRunning(EmulatorConfiguration(), logger: testLogger) { emulator, endpoints in
            try await emulator.withGateway(base: endpoints.http1, maxInFlight: 16, logger: testLogger) { gateway in
                try await Dispatcher.with(store: store, listen: false, gateway: gateway, logger: testLogger) { dispatcher in
                    try await dispatcher.run(.drain(horizon: .seconds(2)))
                }
            }
        }
    }

    /// The devices apps registered in acme (not people's email addresses, which Herald keeps).
    func countRegisteredDevices() async throws -> Int {
        try await store.withTenant(acme) {
            try await $0.connection.query("SELECT count(*) FROM devices WHERE kind <> 'email'").single().decode(Int.self, at: 0)
        }
    }

    /// Rows of a table in acme (to check that a refusal wrote nothing).
    func count(_ table: String) async throws -> Int {
        try await store.withTenant(acme) {
            try await $0.connection.query("SELECT count(*) FROM \(identifier: table)").single().decode(Int.self, at: 0)
        }
    }
}
