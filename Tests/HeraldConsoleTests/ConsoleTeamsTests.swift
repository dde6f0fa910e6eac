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

/// An admin takes someone out of a team from their console page (docs/concepts.md#people-leave-teams);
/// nobody else may.
@Suite struct ConsoleTeamsTests {
    @Test func anAdminTakesSomeoneOutOfATeamAndAMemberMayNot() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await store.createTenant(slug: "acme", name: "Acme")
            try await store.withTenant(acme) { try await addAcmePeople($0) }
            let (ada, dana) = try await store.withTenant(acme) { session in
                (
                    try await session.createPersonToken(for: "root@acme.test", name: nil, lifetime: nil, by: "test").secret,
                    try await session.createPersonToken(for: "dana@acme.test", name: nil, lifetime: nil, by: "test").secret
                )
            }
            let attempts = FailedAttempts(rate: 1_000, burst: 1_000, trustForwardedFor: false)
            let console = try Console(store: store, secureCookies: false, attempts: attempts, logger: testLogger)
            let api = HeraldAPI(store: store, attempts: attempts, logger: testLogger, additions: { console.addRoutes(to: $0) })
            try await APIServer(api: api, host: "127.0.0.1", port: 0, tls: nil).application().test(.router) { client in
                func page(_ cookie: String, _ path: String) async throws -> String {
                    String(buffer: try await client.execute(uri: path, method: .get, headers: [.cookie: "herald_console=\(cookie)"]).body)
                }
                func remove(_ cookie: String, csrf: String) async throws -> HTTPResponse.Status {
                    try await client.execute(
                        uri: "/console/people/chidi@acme.test/teams/ops/remove", method: .post,
                        headers: [.cookie: "herald_console=\(cookie)", .contentType: "application/x-www-form-urlencoded"],
                        body: ByteBuffer(string: "csrf=\(csrf)")
                    ).status
                }
                func csrf(_ html: String) throws -> String {
                    String(try #require(html.firstMatch(of: /name="csrf" value="([^"]+)"/)).1)
                }
                // Dana, a member, sees no such button, and a form made by hand is refused.
                let danaSession = try await store.startConsoleSession(presenting: dana).cookie
                let danaPage = try await page(danaSession, "/console/people/dana@acme.test")
                #expect(!danaPage.contains("Take out of"))
                #expect(try await remove(danaSession, csrf: try csrf(danaPage)) == .forbidden)
                // Ada takes Chidi out of ops.
                let adaSession = try await store.startConsoleSession(presenting: ada).cookie
                let before = try await page(adaSession, "/console/people/chidi@acme.test")
                #expect(before.contains("/console/people/chidi@acme.test/teams/ops/remove"))
                #expect(try await remove(adaSession, csrf: try csrf(before)) == .seeOther)
                let after = try await page(adaSession, "/console/people/chidi@acme.test")
                #expect(after.contains("In no team."))
            }
            let teams = try await store.withTenant(acme) { try await $0.memberships(of: try await $0.person(email: "chidi@acme.test")) }
            #expect(teams.isEmpty)
        }
    }
}
