import Foundation
import HeraldCore
import Testing

@testable import HeraldAPI

/// The token bucket, without a clock of its own: instants are given.
struct TokenBucketTests {
    let start = ContinuousClock.now

    @Test func aBurstGoesAtOnceThenTheRateHolds() {
        var bucket = TokenBucket(rate: 2, burst: 3, now: start)
        #expect((0..<3).allSatisfy { _ in bucket.take(at: start) == nil })
        #expect(bucket.take(at: start) == .milliseconds(500))
        // Half a second later one token is back, and only one.
        #expect(bucket.take(at: start + .milliseconds(500)) == nil)
        #expect(bucket.take(at: start + .milliseconds(500)) == .milliseconds(500))
        // Long idle: full again, never more than the burst.
        #expect(bucket.isFull(at: start + .seconds(10)))
        #expect((0..<3).allSatisfy { _ in bucket.take(at: start + .seconds(10)) == nil })
        #expect(bucket.take(at: start + .seconds(10)) != nil)
    }

    @Test func eachCredentialHasItsOwnBucketOfItsKind() {
        let limiter = RateLimiter(RateLimits(personRate: 1, personBurst: 1, keyRate: 1, keyBurst: 2))
        let person = UUID()
        let other = UUID()
        let key = UUID()
        #expect(limiter.admit(person, kind: .personToken, at: start) == nil)
        #expect(limiter.admit(person, kind: .personToken, at: start) != nil)
        #expect(limiter.admit(other, kind: .personToken, at: start) == nil)
        #expect(limiter.admit(key, kind: .tenantKey, at: start) == nil && limiter.admit(key, kind: .tenantKey, at: start) == nil)
        #expect(limiter.admit(key, kind: .tenantKey, at: start) != nil)
    }
}
