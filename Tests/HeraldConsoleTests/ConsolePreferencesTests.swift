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

/// The preferences form on a person's own console page (docs/console.md) shows what is set,
/// whatever it is, and saving writes only what the person changed: a window set elsewhere stays,
/// and a tenant's default the form showed stays a default.
@Suite struct ConsolePreferencesTests {
    /// The fields a browser posts: every hidden input, and each select's selected option.
    static func fields(of page: String) -> [(String, String)] {
        var fields: [(String, String)] = []
        let hidden = /<input type="hidden" name="([^"]+)" value="([^"]*)">/
        for match in page.matches(of: hidden) { fields.append((String(match.1), String(match.2))) }
        let select = /<select name="([^"]+)"[^>]*>(.*?)<\/select>/
        for match in page.matches(of: select) {
            if let chosen = String(match.2).firstMatch(of: /<option value="([^"]*)" selected>/) {
                fields.append((String(match.1), String(chosen.1)))
            }
        }
        return fields
    }

    static func encoded(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        func escape(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
        return fields.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    @Test func savingWritesOnlyWhatWasChangedAndShowsAWindowSetElsewhere() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await store.createTenant(slug: "acme", name: "Acme")
            let (dana, ada) = try await store.withTenant(acme) { session -> (Person, Person) in
                try await addAcmePeople(session)
                let (dana, ada) = (try await session.person(email: "dana@acme.test"), try await session.person(email: "root@acme.test"))
                // A window the form's list lacks, set by the API; the tenant's default for approvals: off.
                try await session.setDigestWindow(try DigestWindow.parse("daily 06:30"), for: dana)
                try await session.setPreference(.activityApproved, app: .member, mode: .off, for: nil, by: ada)
                return (dana, ada)
            }
            let token = try await store.withTenant(acme) {
                try await $0.createPersonToken(for: "dana@acme.test", name: nil, lifetime: nil, by: "test")
            }
            let attempts = FailedAttempts(rate: 1_000, burst: 1_000, trustForwardedFor: false)
            let console = try Console(store: store, secureCookies: false, attempts: attempts, logger: testLogger)
            let api = HeraldAPI(store: store, attempts: attempts, logger: testLogger, additions: { console.addRoutes(to: $0) })
            try await APIServer(api: api, host: "127.0.0.1", port: 0, tls: nil).application().test(.router) { client in
                let cookie = try await store.startConsoleSession(presenting: token.secret).cookie
                let page = try await client.execute(
                    uri: "/console/people/dana@acme.test", method: .get, headers: [.cookie: "herald_console=\(cookie)"])
                let html = String(buffer: page.body)
                var fields = Self.fields(of: html)
                #expect(fields.contains { $0 == ("window", "daily 06:30") }, "the form shows the window as it is")
                #expect(fields.contains { $0 == ("mode.activity.approved.member", "off") })
                // Dana changes one thing: assignments go into her digest.
                let index = try #require(fields.firstIndex { $0.0 == "mode.activity.assigned.member" })
                fields[index].1 = "digest"
                let saved = try await client.execute(
                    uri: "/console/people/dana@acme.test/preferences", method: .post,
                    headers: [.cookie: "herald_console=\(cookie)", .contentType: "application/x-www-form-urlencoded"],
                    body: ByteBuffer(string: Self.encoded(fields)))
                #expect(saved.status == .seeOther || saved.status == .found, "\(saved.status) \(String(buffer: saved.body))")
            }
            // The window stayed; only the changed mode became hers; the default is still the tenant's.
            let (after, restored) = try await store.withTenant(acme) { session -> (PreferenceSummary, PreferenceSummary) in
                let after = try await session.preferences(for: dana)
                try await session.setPreference(.activityApproved, app: .member, mode: .immediate, for: nil, by: ada)
                return (after, try await session.preferences(for: dana))
            }
            #expect(after.digestWindow == "daily 06:30")
            let own = after.entries.filter { $0.origin == .own }.map { "\($0.event.rawValue) \($0.app.rawValue) \($0.mode.rawValue)" }
            #expect(own == ["activity.assigned member digest"], "\(own)")
            #expect(restored.entries.first { $0.event == .activityApproved && $0.app == .member }?.mode == .immediate)
        }
    }
}
