import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The cache's rules as a value: what it keeps, for how long, and what drops it.
struct CredentialCacheStateTests {
    let authentication = Authentication(
        tenant: Tenant(id: UUID(), slug: "acme", name: "Acme", createdAt: Date()), credentialID: UUID(), kind: .tenantKey, person: nil,
        expiresAt: nil)
    let key = Data([1, 2, 3])

    @Test func nothingIsKeptWhileNobodyListens() {
        var state = CredentialCacheState(capacity: 10)
        state.keep(authentication, for: key, readAt: state.generation, now: 0, timeToLive: 5, expiresIn: nil)
        #expect(state.lookup(key, now: 0) == nil)
    }

    @Test func anEntryLivesItsTimeToLiveOrUntilTheCredentialExpires() {
        var state = CredentialCacheState(capacity: 10)
        state.listen(.connected)
        state.keep(authentication, for: key, readAt: state.generation, now: 100, timeToLive: 5, expiresIn: nil)
        #expect(state.lookup(key, now: 104.9) == authentication)
        #expect(state.lookup(key, now: 105) == nil)
        state.keep(authentication, for: key, readAt: state.generation, now: 200, timeToLive: 5, expiresIn: 1)
        #expect(state.lookup(key, now: 200.9) == authentication)
        #expect(state.lookup(key, now: 201) == nil)
        // Already expired: not kept at all.
        state.keep(authentication, for: key, readAt: state.generation, now: 300, timeToLive: 5, expiresIn: -1)
        #expect(state.lookup(key, now: 300) == nil)
    }

    @Test func aChangeDropsItsTenantOnlyAndAReadFromBeforeItIsNotKept() {
        var state = CredentialCacheState(capacity: 10)
        state.listen(.connected)
        let other = Authentication(
            tenant: Tenant(id: UUID(), slug: "globex", name: "Globex", createdAt: Date()), credentialID: UUID(), kind: .tenantKey,
            person: nil, expiresAt: nil)
        state.keep(authentication, for: key, readAt: state.generation, now: 0, timeToLive: 5, expiresIn: nil)
        state.keep(other, for: Data([9]), readAt: state.generation, now: 0, timeToLive: 5, expiresIn: nil)
        let before = state.generation
        state.changed(tenant: authentication.tenant.id)
        #expect(state.lookup(key, now: 1) == nil && state.lookup(Data([9]), now: 1) == other)
        // Read before the change was heard: it may be what the change undid.
        state.keep(authentication, for: key, readAt: before, now: 1, timeToLive: 5, expiresIn: nil)
        #expect(state.lookup(key, now: 1) == nil)
    }

    @Test func entriesLiveOnWhileTheListenerIsAwayAndGoWhenItComesBack() {
        var state = CredentialCacheState(capacity: 10)
        state.listen(.connected)
        state.keep(authentication, for: key, readAt: state.generation, now: 0, timeToLive: 5, expiresIn: nil)
        state.listen(.away)
        #expect(state.lookup(key, now: 1) == authentication)
        state.keep(authentication, for: Data([7]), readAt: state.generation, now: 1, timeToLive: 5, expiresIn: nil)
        #expect(state.lookup(Data([7]), now: 5.9) == authentication && state.lookup(Data([7]), now: 6) == nil)
        state.listen(.connected)
        #expect(state.lookup(key, now: 2) == nil)
        state.keep(authentication, for: key, readAt: state.generation, now: 2, timeToLive: 5, expiresIn: nil)
        state.listen(.off)
        #expect(state.lookup(key, now: 3) == nil)
    }

    @Test func aFullCacheMakesRoomFromExpiredEntriesOnly() {
        var state = CredentialCacheState(capacity: 2)
        state.listen(.connected)
        state.keep(authentication, for: Data([1]), readAt: state.generation, now: 0, timeToLive: 1, expiresIn: nil)
        state.keep(authentication, for: Data([2]), readAt: state.generation, now: 0, timeToLive: 5, expiresIn: nil)
        state.keep(authentication, for: Data([3]), readAt: state.generation, now: 0.5, timeToLive: 5, expiresIn: nil)
        #expect(state.lookup(Data([3]), now: 0.5) == nil, "full")
        // Full of live entries, it looks again only once the first of them runs out (not at
        // every miss, which swept the whole table).
        #expect(state.fullUntil == 1)
        state.keep(authentication, for: Data([4]), readAt: state.generation, now: 0.9, timeToLive: 5, expiresIn: nil)
        #expect(state.lookup(Data([4]), now: 0.9) == nil && state.fullUntil == 1)
        state.keep(authentication, for: Data([3]), readAt: state.generation, now: 2, timeToLive: 5, expiresIn: nil)
        #expect(state.lookup(Data([3]), now: 2) == authentication && state.lookup(Data([2]), now: 2) == authentication)
    }
}

/// The cache against a real database: a revocation is heard within a second; with the
/// listener cut, a cached credential is refused once its five seconds are up.
struct CredentialCacheTests {
    /// Waits (for the listener's report, not a fixed time) until `condition` holds.
    private func until(_ what: String, _ condition: () -> Bool) async throws {
        let start = ContinuousClock.now
        while !condition() {
            guard ContinuousClock.now - start < .seconds(60) else { throw StoreError(.notFound, "never: \(what)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test func aRevocationHeardByTheListenerIsRefusedWithinASecond() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            let (token, secret) = try await acme.run {
                try await $0.createPersonToken(for: "chidi@acme.test", name: "Pixel", lifetime: nil, by: "test")
            }
            // An hour to live: only the notification can explain a refusal.
            let cache = CredentialCache(store: store, timeToLive: .seconds(3600))
            let listening = Task { await cache.run() }
            defer { listening.cancel() }
            try await until("the listener connects") { cache.listening == .connected }
            #expect(try await cache.authenticate(secret).person?.email == "chidi@acme.test")
            #expect(try await cache.authenticate(secret).credentialID == token.id)
            #expect(cache.databaseReads == 1, "the second request was answered from the cache")

            _ = try await acme.run { try await $0.revokeCredential(id: token.id) }
            let revoked = ContinuousClock.now
            var refused: AuthenticationFailure?
            while refused == nil, ContinuousClock.now - revoked < .seconds(30) {
                do { _ = try await cache.authenticate(secret) } catch let failure as AuthenticationFailure { refused = failure }
                if refused == nil { try await Task.sleep(for: .milliseconds(5)) }
            }
            let took = ContinuousClock.now - revoked
            #expect(refused == .revoked)
            #expect(took < .seconds(1), "refused \(took) after the revocation committed")
            // Another tenant's change drops nothing of Acme's; a person's new name drops theirs.
            let (_, other) = try await acme.run {
                try await $0.createPersonToken(for: "dana@acme.test", name: "Phone", lifetime: nil, by: "test")
            }
            #expect(try await cache.authenticate(other).person?.name != "Dana Renamed")
            _ = try await acme.run {
                try await $0.connection.query("UPDATE people SET display_name = 'Dana Renamed' WHERE email = 'dana@acme.test'")
            }
            var renamed = false
            while !renamed, ContinuousClock.now - revoked < .seconds(30) {
                renamed = try await cache.authenticate(other).person?.name == "Dana Renamed"
                if !renamed { try await Task.sleep(for: .milliseconds(5)) }
            }
            #expect(renamed)
        }
    }

    @Test func withTheListenerCutACachedCredentialIsRefusedOnceItsFiveSecondsAreUp() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            let (token, secret) = try await acme.run { try await $0.createTenantKey(name: "backend", lifetime: nil, by: "test") }
            let cache = CredentialCache(store: store)
            // A listener whose database never answers: cut from the start.
            let cut = PostgresNotifier(
                configuration: try PostgresConfiguration("host=/nonexistent/herald port=1 dbname=none", connectTimeout: 1), logger: testLogger)
            let listening = Task { await cache.run(on: cut) }
            defer { listening.cancel() }
            try await until("the listener reports it cannot connect") { cache.listening == .away }

            _ = try await cache.authenticate(secret)
            let cached = ContinuousClock.now
            _ = try await acme.run { try await $0.revokeCredential(id: token.id) }
            // Still answered from the cache while its five seconds last (nothing was heard)…
            let answered = try? await cache.authenticate(secret)
            if ContinuousClock.now - cached < .seconds(5) {
                #expect(answered?.credentialID == token.id && cache.databaseReads == 1)
            }
            // …and refused once they are up.
            try await Task.sleep(until: cached + .seconds(5), clock: .continuous)
            await #expect(throws: AuthenticationFailure.revoked) { try await cache.authenticate(secret) }
        }
    }

    @Test func withNoListenerRunningNothingIsCached() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            let (key, secret) = try await acme.run { try await $0.createTenantKey(name: "backend", lifetime: nil, by: "test") }
            let cache = CredentialCache(store: store)
            _ = try await cache.authenticate(secret)
            _ = try await acme.run { try await $0.revokeCredential(id: key.id) }
            await #expect(throws: AuthenticationFailure.revoked) { try await cache.authenticate(secret) }
            #expect(cache.databaseReads == 2)
        }
    }
}
