import Foundation
import HeraldAPI
import HeraldCore
import Testing

@testable import HeraldStore

/// Who may call: no credentials, bad ones, revoked, expired, another tenant's, keys.
@Suite struct APIAuthenticationTests {
    @Test func operatorsEndpointsNeedNoCredentials() async throws {
        try await APIHarness.with { api in
            let health = try await api.call("GET", "/healthz", token: nil)
            #expect(health.status == 200 && health.json["status"] as? String == "ok")
            let ready = try await api.call("GET", "/readyz", token: nil)
            #expect(ready.status == 200 && ready.json["status"] as? String == "ready")
            let nowhere = try await api.call("GET", "/v2/nothing", token: nil)
            #expect(nowhere.status == 404 && nowhere.isProblem)
        }
    }

    @Test func noBadRevokedOrExpiredCredentialsAre401WithAProblem() async throws {
        try await APIHarness.with { api in
            let none = try await api.call("GET", "/v1/me", token: nil)
            #expect(none.status == 401 && none.isProblem && none.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            let basic = try await api.call("GET", "/v1/me", token: nil, headers: [("Authorization", "Basic YWxpY2U6cGFzcw==")])
            #expect(basic.status == 401 && basic.isProblem)
            let garbage = try await api.call("GET", "/v1/me", token: "hrp_' OR 1=1 --")
            #expect(garbage.status == 401 && garbage.isProblem)

            let token = try await api.token("chidi@acme.test")
            let me = try await api.call("GET", "/v1/me", token: token)
            #expect(me.status == 200, "\(String(decoding: me.body, as: UTF8.self))")
            #expect((me.json["person"] as? [String: Any])?["email"] as? String == "chidi@acme.test")
            #expect((me.json["tenant"] as? [String: Any])?["slug"] as? String == "acme" && me.json["isAdmin"] as? Bool == false)

            // Revoked: refused on the very next request.
            let id = try await api.store.withTenant(api.acme) { try await $0.credentials(kind: .personToken).first?.id }
            try await api.store.withTenant(api.acme) { _ = try await $0.revokeCredential(id: try #require(id)) }
            let revoked = try await api.call("GET", "/v1/me", token: token)
            #expect(revoked.status == 401 && revoked.isProblem && (revoked.json["detail"] as? String)?.contains("revoked") == true)

            let expiring = try await api.token("dana@acme.test", lifetime: .seconds(60))
            _ = try await api.store.withTenant(api.acme) {
                try await $0.connection.query("UPDATE credentials SET expires_at = now() - interval '1 second' WHERE revoked_at IS NULL")
            }
            let expired = try await api.call("GET", "/v1/me", token: expiring)
            #expect(expired.status == 401 && (expired.json["detail"] as? String)?.contains("expired") == true)
            // No secret is echoed back.
            #expect(!String(decoding: expired.body, as: UTF8.self).contains(expiring))
        }
    }

    /// With the credential cache running (as `herald serve` runs it): a token revoked through
    /// this server is refused on its next request; one revoked elsewhere once the database's
    /// notification arrives (docs/api.md#credentials).
    @Test func withTheCredentialCacheARevocationStillEndsTheToken() async throws {
        try await APIHarness.with { api in
            let listening = Task { await api.credentials.run() }
            defer { listening.cancel() }
            while api.credentials.listening != .connected { try await Task.sleep(for: .milliseconds(5)) }
            let admin = try await api.key()
            let token = try await api.token("chidi@acme.test")
            for _ in 0..<3 { #expect(try await api.call("GET", "/v1/me", token: token).status == 200) }
            let reads = api.credentials.databaseReads
            #expect(try await api.call("GET", "/v1/me", token: token).status == 200)
            #expect(api.credentials.databaseReads == reads, "answered from the cache")

            let listed = try await api.call("GET", "/v1/people/chidi@acme.test/tokens", token: admin)
            let id = try #require(listed.items.first?["id"] as? String)
            #expect(try await api.call("DELETE", "/v1/people/chidi@acme.test/tokens/\(id)", token: admin).status == 204)
            let next = try await api.call("GET", "/v1/me", token: token)
            #expect(next.status == 401 && (next.json["detail"] as? String)?.contains("revoked") == true)

            // Revoked by another process (here, the store directly): refused once heard.
            let dana = try await api.token("dana@acme.test")
            #expect(try await api.call("GET", "/v1/me", token: dana).status == 200)
            try await api.store.withTenant(api.acme) { session in
                let mine = try await session.credentials(kind: .personToken, person: "dana@acme.test")
                _ = try await session.revokeCredential(id: try #require(mine.first?.id))
            }
            var status = 200
            let start = ContinuousClock.now
            while status == 200, ContinuousClock.now - start < .seconds(30) {
                status = try await api.call("GET", "/v1/me", token: dana).status
            }
            #expect(status == 401)
        }
    }

    @Test func anotherTenantsIdsAreNotFoundExactlyLikeIdsThatDoNotExist() async throws {
        try await APIHarness.with { api in
            let alice = try await api.token("alice@acme.test")
            let created = try await api.call(
                "POST", "/v1/activities", token: alice,
                json: ["team": "ops", "assignee": "chidi@acme.test", "name": "Ship v2", "deadline": "2026-12-01"])
            #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
            let id = try #require(created.json["id"] as? String)
            let stranger = try await api.token("chidi@acme.test", in: api.globex)
            let theirs = try await api.call("GET", "/v1/activities/\(id)", token: stranger)
            let nothing = try await api.call("GET", "/v1/activities/\(UUID().uuidString.lowercased())", token: stranger)
            #expect(theirs.status == 404 && nothing.status == 404 && theirs.isProblem)
            #expect(theirs.json["title"] as? String == nothing.json["title"] as? String)
            let start = try await api.call("POST", "/v1/activities/\(id)/start", token: stranger)
            #expect(start.status == 404)
            // Dana, in the same tenant but neither assignee nor manager, does not see it either.
            let dana = try await api.token("dana@acme.test")
            #expect(try await api.call("GET", "/v1/activities/\(id)", token: dana).status == 404)
            #expect(try await api.call("GET", "/v1/activities", token: dana).items.isEmpty)
        }
    }

    @Test func aTenantKeyActsAsAdminOrOnBehalfOfAPersonAndMintsTheirTokens() async throws {
        try await APIHarness.with { api in
            let key = try await api.key()
            let me = try await api.call("GET", "/v1/me", token: key)
            #expect(me.status == 200 && me.json["isAdmin"] as? Bool == true && me.json["person"] == nil)
            // Assigning needs a person.
            let body: [String: Any] = ["team": "ops", "assignee": "chidi@acme.test", "name": "Ship", "deadline": "2026-12-01"]
            let nobody = try await api.call("POST", "/v1/activities", token: key, json: body)
            #expect(nobody.status == 400 && nobody.isProblem)
            let asAlice = try await api.call("POST", "/v1/activities", token: key, json: body, headers: [("Herald-On-Behalf-Of", "alice@acme.test")])
            #expect(asAlice.status == 201 && (asAlice.json["manager"] as? [String: Any])?["email"] as? String == "alice@acme.test")
            let unknown = try await api.call("GET", "/v1/me", token: key, headers: [("Herald-On-Behalf-Of", "zed@acme.test")])
            #expect(unknown.status == 422 && unknown.isProblem)

            // The backend signs Chidi in.
            let minted = try await api.call(
                "POST", "/v1/people/chidi@acme.test/tokens", token: key, json: ["name": "Chidi's Pixel", "expiresIn": "90d"])
            #expect(minted.status == 201 && minted.headers["location"]?.hasPrefix("/v1/people/chidi@acme.test/tokens/") == true)
            let secret = try #require(minted.json["secret"] as? String)
            let chidi = try await api.call("GET", "/v1/me", token: secret)
            #expect((chidi.json["person"] as? [String: Any])?["email"] as? String == "chidi@acme.test")
            // A person token may not act for someone else, nor mint tokens.
            let borrowed = try await api.call("GET", "/v1/me", token: secret, headers: [("Herald-On-Behalf-Of", "alice@acme.test")])
            #expect(borrowed.status == 403 && borrowed.isProblem)
            let minting = try await api.call("POST", "/v1/people/dana@acme.test/tokens", token: secret, json: [:])
            #expect(minting.status == 403 && minting.isProblem)
            // The key lists and revokes it.
            let listed = try await api.call("GET", "/v1/people/chidi@acme.test/tokens", token: key)
            #expect(listed.items.count == 1 && !String(decoding: listed.body, as: UTF8.self).contains(secret))
            let location = try #require(minted.headers["location"])
            #expect(try await api.call("DELETE", location, token: key).status == 204)
            #expect(try await api.call("GET", "/v1/me", token: secret).status == 401)
        }
    }
}

/// A credential over its rate gets 429 with Retry-After; others are not held back by it.
@Suite struct APIRateLimitTests {
    @Test func aCredentialOverItsRateIsToldWhenToComeBack() async throws {
        try await APIHarness.with(limits: RateLimits(personRate: 0.001, personBurst: 2)) { api in
            let chidi = try await api.token("chidi@acme.test")
            let dana = try await api.token("dana@acme.test")
            #expect(try await api.call("GET", "/v1/me", token: chidi).status == 200)
            #expect(try await api.call("GET", "/v1/me", token: chidi).status == 200)
            let limited = try await api.call("GET", "/v1/me", token: chidi)
            #expect(limited.status == 429 && limited.isProblem)
            // One token in 1,000 s: however slow the machine, none comes back during the test.
            #expect(limited.headers["retry-after"].flatMap(Int.init).map { (900...1_000).contains($0) } == true, "\(limited.headers)")
            #expect(try await api.call("GET", "/v1/me", token: dana).status == 200)
        }
    }

    /// Made-up tokens were looked up about 4,000 times a second and never held back: an
    /// address's failed attempts now run out, and then it gets 429 before any lookup (a
    /// forged X-Forwarded-For does not make a new address unless the server trusts a proxy).
    @Test func anAddressThatKeepsFailingIsHeldBackBeforeAnyLookup() async throws {
        try await APIHarness.with(limits: RateLimits(anonymousRate: 0.001, anonymousBurst: 3)) { api in
            let chidi = try await api.token("chidi@acme.test")
            #expect(try await api.call("GET", "/v1/me", token: chidi).status == 200, "valid credentials take nothing from the share")
            for attempt in 0..<3 {
                let refused = try await api.call("GET", "/v1/me", token: "hrp_madeup\(attempt)", headers: [("X-Forwarded-For", "10.0.0.\(attempt)")])
                #expect(refused.status == 401)
            }
            let held = try await api.call("GET", "/v1/me", token: "hrp_madeup", headers: [("X-Forwarded-For", "10.9.9.9")])
            #expect(held.status == 429 && held.isProblem && held.headers["retry-after"].flatMap(Int.init).map { $0 >= 900 } == true)
            #expect(try await api.call("GET", "/v1/me", token: nil).status == 429, "no credentials at all")
        }
    }

    @Test func theLastForwardedAddressCountsBehindATrustedProxy() {
        let attempts = FailedAttempts(rate: 0.001, burst: 1, trustForwardedFor: true)
        attempts.record("203.0.113.7")
        #expect(attempts.wait(for: "203.0.113.7") != nil && attempts.wait(for: "203.0.113.8") == nil)
    }
}
