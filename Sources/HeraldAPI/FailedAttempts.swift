import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird
import Synchronization

/// Requests that came without credentials, or whose credentials were refused, counted per
/// client address in a token bucket: once an address has used up its share, its requests
/// without valid credentials are refused with 429 *before* any credential is looked up, so
/// a flood of made-up tokens no longer reaches the database (about 4,000 lookups a second
/// did). A request with valid credentials never takes from the bucket, but it is refused
/// too while its address is over its share (it cannot be told apart before the lookup).
///
/// The API's authentication and the console's sign-in share one.
public final class FailedAttempts: Sendable {
    private let rate: Double
    private let burst: Double
    private let trustForwardedFor: Bool
    private let buckets = Mutex<[String: TokenBucket]>([:])

    /// - Parameter trustForwardedFor: the server is behind a proxy that appends the client's
    ///   address to `X-Forwarded-For` (`herald serve --behind-tls`): the last entry counts,
    ///   not the proxy's own address, which every client shares.
    public init(rate: Double, burst: Double, trustForwardedFor: Bool) {
        self.rate = rate
        self.burst = burst
        self.trustForwardedFor = trustForwardedFor
    }

    /// The address a request is counted under.
    public func address(of request: Request, context: APIContext) -> String {
        if trustForwardedFor, let forwarded = request.headers[values: .xForwardedFor].last,
            let last = forwarded.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty
        {
            return last
        }
        return context.peerAddress
    }

    /// nil when `address` may try now; otherwise how long until it may.
    public func wait(for address: String, at now: ContinuousClock.Instant = .now) -> Duration? {
        buckets.withLock { buckets in
            guard var bucket = buckets[address] else { return nil }
            return bucket.take(at: now)
        }
    }

    /// Counts one failed attempt from `address`.
    public func record(_ address: String, at now: ContinuousClock.Instant = .now) {
        buckets.withLock { buckets in
            if buckets.count > 10_000 { buckets = buckets.filter { !$0.value.isFull(at: now) } }
            var bucket = buckets[address] ?? TokenBucket(rate: rate, burst: burst, now: now)
            _ = bucket.take(at: now)
            buckets[address] = bucket
        }
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}
