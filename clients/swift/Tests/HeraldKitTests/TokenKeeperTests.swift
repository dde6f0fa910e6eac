import Foundation
import Testing

@testable import HeraldKit

/// Tokens that change: asked once for however many requests were refused with one token.
struct TokenKeeperTests {
    /// A provider that hands out `t1`, `t2`, … and counts how often it was asked.
    final class Backend: Sendable {
        let asked = Locked(0)
        let failing = Locked(false)
        struct Down: Error {}

        var provider: TokenProvider {
            { _ in
                try await Task.sleep(for: .milliseconds(20))
                if self.failing.current { throw Down() }
                return "t"
                    + String(
                        self.asked.withLock {
                            $0 += 1
                            return $0
                        })
            }
        }
    }

    @Test func theFirstTokenIsAskedForAndARefusedOneIsRenewedOnceForAll() async throws {
        let backend = Backend()
        let keeper = TokenKeeper(token: "", provider: backend.provider)
        #expect(try await keeper.current() == "t1")
        // Ten requests refused with t1 at once: one renewal, and all go on with t2.
        let renewed = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<10 { group.addTask { try await keeper.renew(refused: "t1") } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(renewed == ["t2"] && backend.asked.current == 2)
        // One refused with the old token after that gets the new one without asking.
        #expect(try await keeper.renew(refused: "t1") == "t2" && backend.asked.current == 2)
    }

    @Test func aProviderThatFailsIsAskedAgainNextTimeAndNoProviderIsUnauthorized() async throws {
        let backend = Backend()
        let keeper = TokenKeeper(token: "fixed", provider: backend.provider)
        backend.failing.withLock { $0 = true }
        await #expect(throws: Backend.Down.self) { try await keeper.renew(refused: "fixed") }
        backend.failing.withLock { $0 = false }
        #expect(try await keeper.renew(refused: "fixed") == "t1")
        let alone = TokenKeeper(token: "fixed", provider: nil)
        #expect(!alone.renews)
        #expect(try await alone.current() == "fixed")
        await #expect {
            try await alone.renew(refused: "fixed")
        } throws: { error in
            if case HeraldError.unauthorized = error { true } else { false }
        }
    }
}
