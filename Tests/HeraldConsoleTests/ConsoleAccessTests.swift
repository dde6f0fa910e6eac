import Foundation
import HTTPTypes
import HeraldAPI
import HeraldConsole
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// The console's pages answer as the API does, from the same store calls: what a viewer may
/// not see is "Not found" exactly as what does not exist; what only those who run the tenant
/// may see is "Admins only" to others. (A member asking for another person's page answered
/// as for nobody already; the webhooks and stats pages checked the rule themselves.)
@Suite struct ConsoleAccessTests {
    struct Page {
        let status: Int
        let body: String
    }

    /// The console on a throwaway database (acme and globex, as the API's tests have them),
    /// and a way to open a page signed in with a credential.
    static func with(_ body: @Sendable (Store, Tenant, Tenant, @Sendable (String, String) async throws -> Page) async throws -> Void) async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await store.createTenant(slug: "acme", name: "Acme")
            try await store.withTenant(acme) { try await addAcmePeople($0) }
            let globex = try await store.createTenant(slug: "globex", name: "Globex")
            let attempts = FailedAttempts(rate: 1_000, burst: 1_000, trustForwardedFor: false)
            let console = try Console(store: store, secureCookies: false, attempts: attempts, logger: testLogger)
            let api = HeraldAPI(store: store, attempts: attempts, logger: testLogger, additions: { console.addRoutes(to: $0) })
            let server = APIServer(api: api, host: "127.0.0.1", port: 0, tls: nil)
            try await server.application().test(.router) { client in
                try await body(store, acme, globex) { credential, path in
                    let cookie = try await store.startConsoleSession(presenting: credential).cookie
                    let response = try await client.execute(uri: path, method: .get, headers: [.cookie: "herald_console=\(cookie)"])
                    return Page(status: Int(response.status.code), body: String(buffer: response.body))
                }
            }
        }
    }

    static func token(_ store: Store, _ tenant: Tenant, _ email: String) async throws -> String {
        try await store.withTenant(tenant) { try await $0.createPersonToken(for: email, name: nil, lifetime: nil, by: "test").secret }
    }

    @Test func aPersonsPageIsTheirsAndTheirAdminsAndNotYoursIsNotFound() async throws {
        try await Self.with { store, acme, globex, open in
            let dana = try await Self.token(store, acme, "dana@acme.test")
            let alice = try await Self.token(store, acme, "alice@acme.test")
            let ada = try await Self.token(store, acme, "root@acme.test")
            let rival = try await store.withTenant(globex) { try await $0.createTenantKey(name: "rival", lifetime: nil, by: "test").secret }
            for credential in [dana, alice, rival] {
                let notYours = try await open(credential, "/console/people/chidi@acme.test")
                let missing = try await open(credential, "/console/people/nobody@acme.test")
                #expect(notYours.status == 404 && missing.status == 404)
                #expect(notYours.body.contains("Not found") && missing.body.contains("Not found"))
            }
            #expect(try await open(dana, "/console/people/dana@acme.test").status == 200)
            let seen = try await open(ada, "/console/people/chidi@acme.test")
            #expect(seen.status == 200 && seen.body.contains("Chidi Okafor"))
        }
    }

    @Test func webhooksAndStatsAreForThoseWhoRunTheTenant() async throws {
        try await Self.with { store, acme, globex, open in
            let dana = try await Self.token(store, acme, "dana@acme.test")
            let alice = try await Self.token(store, acme, "alice@acme.test")
            let ada = try await Self.token(store, acme, "root@acme.test")
            let rival = try await store.withTenant(globex) { try await $0.createTenantKey(name: "rival", lifetime: nil, by: "test").secret }
            for path in ["/console/webhooks", "/console/stats"] {
                for credential in [dana, alice] {
                    let page = try await open(credential, path)
                    #expect(page.status == 403 && page.body.contains("Admins only"), "\(path)")
                }
                #expect(try await open(ada, path).status == 200, "\(path)")
                #expect(try await open(rival, path).status == 200, "\(path)")
            }
        }
    }

    /// A person whose address holds `?`, `/`, `#` and `%` has a page, reached by its
    /// percent-encoded segment, and links to it are written so.
    @Test func aPersonWithReservedCharactersInTheirAddressHasAPage() async throws {
        try await Self.with { store, acme, _, open in
            let ada = try await Self.token(store, acme, "root@acme.test")
            _ = try await store.withTenant(acme) { try await $0.addPerson(email: "o'neil?x/y#z%w@acme.test", name: "Odd Neil") }
            let page = try await open(ada, "/console/people/o%27neil%3Fx%2Fy%23z%25w@acme.test")
            #expect(page.status == 200 && page.body.contains("Odd Neil"), "\(page.status)")
        }
    }
}
