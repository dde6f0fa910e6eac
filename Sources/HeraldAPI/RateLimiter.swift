import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird
import Synchronization

/// How many requests a credential may make (docs/api.md): a sustained rate a second and a
/// burst, for person tokens and for tenant keys.
public struct RateLimits: Sendable, Equatable {
    public var personRate: Double
    public var personBurst: Double
    public var keyRate: Double
    public var keyBurst: Double
    /// Requests without valid credentials a client address may make (`FailedAttempts`).
    public var anonymousRate: Double
    public var anonymousBurst: Double

    public init(
        personRate: Double = 20, personBurst: Double = 100, keyRate: Double = 500, keyBurst: Double = 2_000, anonymousRate: Double = 10,
        anonymousBurst: Double = 100
    ) {
        self.personRate = personRate
        self.personBurst = personBurst
        self.keyRate = keyRate
        self.keyBurst = keyBurst
        self.anonymousRate = anonymousRate
        self.anonymousBurst = anonymousBurst
    }
}

/// One token bucket per credential, in this process (several `herald serve` behind one
/// balancer each allow the full rate). Buckets that have filled up again are forgotten.
final class RateLimiter: Sendable {
    private let limits: RateLimits
    private let buckets = Mutex<[UUID: TokenBucket]>([:])

    init(_ limits: RateLimits) {
        self.limits = limits
    }

    /// nil when `credential` may make a request now; otherwise how long until it may.
    func admit(_ credential: UUID, kind: CredentialKind, at now: ContinuousClock.Instant = .now) -> Duration? {
        buckets.withLock { buckets in
            if buckets.count > 10_000 { buckets = buckets.filter { !$0.value.isFull(at: now) } }
            var bucket =
                buckets[credential]
                ?? (kind == .tenantKey
                    ? TokenBucket(rate: limits.keyRate, burst: limits.keyBurst, now: now)
                    : TokenBucket(rate: limits.personRate, burst: limits.personBurst, now: now))
            let wait = bucket.take(at: now)
            buckets[credential] = bucket
            return wait
        }
    }
}

/// Refuses a credential's requests beyond its rate with 429 and `Retry-After` (whole seconds).
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let limiter: RateLimiter

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        let caller = try context.requireCaller()
        if let wait = limiter.admit(caller.credentialID, kind: caller.kind) {
            throw Problem.tooManyRequests("this credential is over its rate; retry after the time Retry-After says", wait: wait)
        }
        return try await next(request, context)
    }
}
