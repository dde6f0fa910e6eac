/// How the emulator listens and which faults it injects.
public struct EmulatorConfiguration: Sendable {
    /// Faults to inject, so retries and token hygiene can be seen working.
    public struct Faults: Sendable, Equatable {
        /// Tokens starting with this are UNREGISTERED (FCM 404) or Unregistered (APNs 410).
        public var deadTokenPrefix: String?
        /// Share (0…1) of sends answered 503 UNAVAILABLE with `Retry-After`.
        public var unavailableShare: Double
        /// Share (0…1) of sends answered 429 QUOTA_EXCEEDED / TooManyRequests with `Retry-After`.
        public var throttledShare: Double
        /// The `Retry-After` those answers carry, in seconds.
        public var retryAfterSeconds: Int
        /// Added to every send before it is answered.
        public var latency: Duration

        public init(
            deadTokenPrefix: String? = "dead-", unavailableShare: Double = 0, throttledShare: Double = 0, retryAfterSeconds: Int = 1,
            latency: Duration = .zero
        ) {
            self.deadTokenPrefix = deadTokenPrefix
            self.unavailableShare = unavailableShare
            self.throttledShare = throttledShare
            self.retryAfterSeconds = retryAfterSeconds
            self.latency = latency
        }
    }

    /// Loopback only: the emulator is for laptops, tests and benchmarks.
    public var host: String
    /// HTTP/2 over TLS (ALPN, HTTP/1.1 fallback); 0 picks a free port.
    public var httpsPort: Int
    /// h2c (HTTP/2 with prior knowledge); 0 picks a free port.
    public var http2Port: Int
    /// HTTP/1.1; 0 picks a free port.
    public var http1Port: Int
    /// The FCM project the development service account names.
    public var projectID: String
    public var faults: Faults
    /// Record only each message's token and arrival time (for benchmarks).
    public var leanRecording = false
    /// Whether the HTTPS endpoint offers HTTP/2 in ALPN; without it, it is a server that
    /// speaks HTTP/1.1 only (an old gateway), for seeing clients fall back.
    public var httpsOffersHTTP2 = true

    public init(
        host: String = "127.0.0.1", httpsPort: Int = 0, http2Port: Int = 0, http1Port: Int = 0, projectID: String = "herald-dev",
        faults: Faults = .init()
    ) {
        self.host = host
        self.httpsPort = httpsPort
        self.http2Port = http2Port
        self.http1Port = http1Port
        self.projectID = projectID
        self.faults = faults
    }
}
