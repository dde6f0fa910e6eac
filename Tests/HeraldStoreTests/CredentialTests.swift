import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The secrets themselves: their shape, and what is stored of them.
struct CredentialSecretTests {
    @Test func aNewSecretHasItsKindsPrefixAndParsesBack() throws {
        for kind in CredentialKind.allCases {
            let secret = CredentialSecret.generate(kind)
            #expect(secret.text.hasPrefix(kind.secretPrefix))
            #expect(secret.text.count == 4 + 12 + 1 + 52)
            let parsed = try #require(CredentialSecret(parsing: secret.text))
            #expect(parsed.kind == kind && parsed.prefix == secret.prefix && parsed.matches(secret.sha256))
        }
        // 256 random bits each: two are never alike.
        #expect(CredentialSecret.generate(.personToken).text != CredentialSecret.generate(.personToken).text)
    }

    @Test(arguments: [
        "", "hrp_", "Bearer hrp_abcdefghijkl_", "hrx_abcdefghijkl_" + String(repeating: "a", count: 52),
        "hrp_ABCDEFGHIJKL_" + String(repeating: "a", count: 52), "hrp_abcdefghijkl-" + String(repeating: "a", count: 52),
        "hrp_abcdefghijkl_" + String(repeating: "a", count: 51), "hrp_abcdefghijkl_" + String(repeating: "1", count: 52),
        "hrp_abcdefghijk\u{e9}_" + String(repeating: "a", count: 52), "' OR 1=1 --"
    ])
    func anythingNotShapedLikeASecretIsRefusedBeforeAnyLookup(text: String) {
        #expect(CredentialSecret(parsing: text) == nil)
    }

    @Test func anotherSecretDoesNotMatchTheStoredHash() {
        let secret = CredentialSecret.generate(.tenantKey)
        #expect(!CredentialSecret.generate(.tenantKey).matches(secret.sha256))
        #expect(!secret.matches(Data()))
        #expect(secret.sha256 != Data(secret.text.utf8))
    }

    @Test func base32FollowsRFC4648() {
        // RFC 4648 §10, lowercased and without padding.
        let vectors = ["": "", "f": "my", "fo": "mzxq", "foo": "mzxw6", "foob": "mzxw6yq", "fooba": "mzxw6ytb", "foobar": "mzxw6ytboi"]
        for (input, output) in vectors { #expect(Base32.encode(Array(input.utf8)) == output) }
    }
}

/// Credentials in the database: created, found by their secret, revoked, expired, and
/// never across tenants.
struct CredentialTests {
    @Test func aPersonTokenActsAsItsPersonInItsTenant() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            let (credential, secret) = try await acme.run {
                try await $0.createPersonToken(for: "chidi@acme.test", name: "Chidi's Pixel", lifetime: .seconds(90 * 86_400), by: "test")
            }
            #expect(credential.kind == .personToken && credential.person?.email == "chidi@acme.test" && credential.lastUsedAt == nil)
            #expect(credential.expiresAt.map { $0.timeIntervalSinceNow > 89 * 86_400 } == true)
            let authentication = try await store.authenticate(secret)
            #expect(authentication.tenant == acme.tenant && authentication.kind == .personToken)
            #expect(authentication.person?.id == credential.person?.id && authentication.credentialID == credential.id)
            let chidi = try await acme.run { try await $0.person(email: "chidi@acme.test") }
            #expect(authentication.person == chidi)
            // Its use is recorded; the secret is nowhere in the database.
            let used = try await acme.run { try await $0.credential(id: credential.id) }
            #expect(used.lastUsedAt != nil)
            let stored = try await acme.run {
                try await $0.connection.query("SELECT count(*) FROM credentials c WHERE c::text LIKE '%' || \(String(secret.dropFirst(17))) || '%'")
                    .single().decode(Int.self, at: 0)
            }
            #expect(stored == 0)
        }
    }

    @Test func aRevokedOrExpiredCredentialIsRefusedAtOnce() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            let (key, keySecret) = try await acme.run { try await $0.createTenantKey(name: "backend", lifetime: nil, by: "test") }
            #expect(try await store.authenticate(keySecret).person == nil)
            let revoked = try await acme.run { try await $0.revokeCredential(id: key.id) }
            #expect(revoked.revokedAt != nil)
            await #expect(throws: AuthenticationFailure.revoked) { try await store.authenticate(keySecret) }
            // Revoking again changes nothing.
            #expect(try await acme.run { try await $0.revokeCredential(id: key.id) }.revokedAt == revoked.revokedAt)

            let (token, tokenSecret) = try await acme.run {
                try await $0.createPersonToken(for: "dana@acme.test", name: nil, lifetime: .seconds(60), by: "test")
            }
            #expect(token.name == "token for Dana Scully")
            _ = try await acme.run {
                try await $0.connection.query("UPDATE credentials SET expires_at = now() - interval '1 second' WHERE id = \(token.id)")
            }
            await #expect(throws: AuthenticationFailure.expired) { try await store.authenticate(tokenSecret) }
        }
    }

    @Test func theLiveChannelsCheckFindsWhatEndedSinceTheLastOne() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            let (_, first) = try await store.credentialStanding([])
            let (key, _) = try await acme.run { try await $0.createTenantKey(name: "backend", lifetime: nil, by: "test") }
            let (token, _) = try await acme.run {
                try await $0.createPersonToken(for: "dana@acme.test", name: nil, lifetime: .seconds(60), by: "test")
            }
            let (kept, _) = try await acme.run {
                try await $0.createPersonToken(for: "chidi@acme.test", name: nil, lifetime: .seconds(60), by: "test")
            }
            _ = try await acme.run { try await $0.revokeCredential(id: key.id) }
            _ = try await acme.run {
                try await $0.connection.query("UPDATE credentials SET expires_at = now() - interval '1 second' WHERE id = \(token.id)")
            }
            let (ended, checkedAt) = try await store.credentialsEnded(since: first - 1)
            #expect(ended[CredentialKey(tenant: acme.tenant.id, id: key.id)] == .revoked)
            #expect(ended[CredentialKey(tenant: acme.tenant.id, id: token.id)] == .expired)
            #expect(ended[CredentialKey(tenant: acme.tenant.id, id: kept.id)] == nil)
            #expect(try await store.credentialsEnded(since: checkedAt + 1).ended.isEmpty, "nothing ended since")
            // The full check agrees, and finds a credential removed outright.
            let gone = CredentialKey(tenant: acme.tenant.id, id: UUID())
            let keys = [key, token, kept].map { CredentialKey(tenant: acme.tenant.id, id: $0.id) } + [gone]
            let standing = try await store.credentialStanding(keys).failures
            #expect(standing == [key.id: .revoked, token.id: .expired, gone.id: .unknown])
        }
    }

    @Test func aSecretThatIsAlmostRightIsUnknown() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            let (_, secret) = try await acme.run { try await $0.createTenantKey(name: "backend", lifetime: nil, by: "test") }
            // The right prefix with another secret, and the right secret presented as the other kind.
            let wrongSecret = String(secret.prefix(17)) + String(repeating: "a", count: 52)
            let otherKind = "hrp_" + secret.dropFirst(4)
            for presented in [wrongSecret, otherKind, "hrk_aaaaaaaaaaaa_" + String(repeating: "b", count: 52), "nonsense"] {
                await #expect(throws: AuthenticationFailure.unknown) { try await store.authenticate(presented) }
            }
        }
    }

    @Test func credentialsStayInTheirTenant() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store, slug: "acme")
            let globex = try await WorkflowFixture.make(store, slug: "globex")
            let (acmeToken, acmeSecret) = try await acme.run {
                try await $0.createPersonToken(for: "chidi@acme.test", name: nil, lifetime: nil, by: "test")
            }
            _ = try await globex.run { try await $0.createPersonToken(for: "chidi@acme.test", name: nil, lifetime: nil, by: "test") }
            #expect(try await store.authenticate(acmeSecret).tenant == acme.tenant)
            // Globex sees only its own token, cannot read or revoke Acme's by id.
            let listed = try await globex.run { try await $0.credentials(kind: .personToken) }
            #expect(listed.count == 1 && !listed.contains { $0.id == acmeToken.id })
            await #expect(throws: StoreError.self) { try await globex.run { try await $0.revokeCredential(id: acmeToken.id) } }
            #expect(try await store.authenticate(acmeSecret).tenant == acme.tenant)
            // One person's tokens, and bad input, in words.
            #expect(try await acme.run { try await $0.credentials(kind: .personToken, person: "dana@acme.test") }.isEmpty)
            await #expect(throws: InputError.self) {
                try await acme.run { try await $0.createTenantKey(name: "", lifetime: nil, by: "test") }
            }
            await #expect(throws: InputError.self) {
                try await acme.run { try await $0.createTenantKey(name: "forever", lifetime: .seconds(10 * 365 * 86_400), by: "test") }
            }
            await #expect(throws: StoreError.self) {
                try await acme.run { try await $0.createPersonToken(for: "nobody@acme.test", name: nil, lifetime: nil, by: "test") }
            }
        }
    }

    @Test func aConsoleSessionLivesUntilSignOutOrItsCredentialsEnd() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            let (token, secret) = try await acme.run {
                try await $0.createPersonToken(for: "chidi@acme.test", name: nil, lifetime: .seconds(3600), by: "test")
            }
            let (session, cookie) = try await store.startConsoleSession(presenting: secret)
            #expect(session.authentication.person?.email == "chidi@acme.test" && session.csrfToken.count == 52)
            // Never past its token's own expiry.
            #expect(session.expiresAt.timeIntervalSinceNow < 3601)
            #expect(try await store.consoleSession(cookie: cookie) == session)
            #expect(!cookie.contains(secret) && !cookie.contains(session.csrfToken))

            // A tampered or malformed cookie names nothing.
            let tampered = String(cookie.dropLast()) + (cookie.hasSuffix("a") ? "b" : "a")
            for bad in [tampered, "", "not-a-cookie", String(cookie.prefix(36)), cookie + "a"] {
                await #expect(throws: AuthenticationFailure.unknown) { try await store.consoleSession(cookie: bad) }
            }
            await #expect(throws: AuthenticationFailure.unknown) { try await store.startConsoleSession(presenting: "hrp_nothing") }

            // Signing out ends it; revoking the token ends the others at once.
            let (other, otherCookie) = try await store.startConsoleSession(presenting: secret)
            try await store.endConsoleSession(session)
            await #expect(throws: AuthenticationFailure.unknown) { try await store.consoleSession(cookie: cookie) }
            #expect(try await store.consoleSession(cookie: otherCookie) == other)
            _ = try await acme.run { try await $0.revokeCredential(id: token.id) }
            await #expect(throws: AuthenticationFailure.revoked) { try await store.consoleSession(cookie: otherCookie) }
        }
    }
}
