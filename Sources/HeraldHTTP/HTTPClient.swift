import CCurl
import CoreMetrics
import Foundation
import Logging
import Synchronization

/// An HTTP client for the push providers: HTTP/2 on Herald's own nghttp2 loop (`H2Loop`),
/// HTTP/1.1 on libcurl multi handles, each loop driven by one thread.
///
/// Callers `await send(_:)` from any task. `https://` negotiates HTTP/2 with ALPN, and
/// requests to one host are multiplexed as streams on few connections. An origin that does
/// not choose HTTP/2 goes through libcurl instead (HTTP/1.1), as does every request while a
/// proxy variable for its scheme is set (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`) and when
/// `engine` is `.libcurl` (`HERALD_HTTP_ENGINE=libcurl`). `http://` speaks HTTP/1.1 with
/// keep-alive on several connections, or h2c when the server speaks only HTTP/2
/// (`CleartextProtocols` says how that is learnt): on few reused connections, or on
/// libcurl, one connection per request (it cannot reuse them). At most `maxInFlight`
/// requests run at once, and to one origin at most as many as its connections carry; later callers
/// wait here, first come first served (back-pressure). libcurl is never handed more than
/// the connections can carry: its own queue of pending transfers is not fair (with 512 in
/// flight over 200 streams some requests waited 6.7 s while the median took 0.4 s) and
/// counts the wait against the request's timeout. Cancelling the calling task removes its
/// transfer. Proxies follow libcurl's usual variables (`HTTPS_PROXY`, `NO_PROXY`).
public final class HTTPClient: Sendable {
    public struct Configuration: Sendable {
        /// Requests in flight at once; more wait their turn.
        public var maxInFlight: Int
        /// Connections to one host; streams beyond them are multiplexed.
        public var maxConnectionsPerHost: Int
        /// Streams libcurl opens on one connection (servers commonly allow 100).
        public var maxStreamsPerConnection: Int
        /// Connections to one `http://` origin, each carrying one request at a time (HTTP/1.1,
        /// or h2c through libcurl). An origin known to speak h2c on Herald's own client takes
        /// `maxConnectionsPerHost` × `maxStreamsPerConnection` at once, as `https://` does.
        public var maxCleartextConnectionsPerHost: Int
        public var connectTimeout: Duration
        /// A PEM file of extra trusted CAs, used beside the system bundle.
        public var extraCAFile: String?
        /// Speak HTTP/1.1 only (for servers or proxies without HTTP/2); one request per connection at a time.
        public var http1Only: Bool
        /// What carries HTTP/2 (over TLS, and h2c).
        public var engine: Engine

        public enum Engine: String, Sendable, CaseIterable {
            /// Herald's own client on nghttp2 and OpenSSL (the default).
            case nghttp2
            /// libcurl, as every other request.
            case libcurl
        }

        public init(
            maxInFlight: Int = 200, maxConnectionsPerHost: Int = 2, maxStreamsPerConnection: Int = 100,
            maxCleartextConnectionsPerHost: Int = 32, connectTimeout: Duration = .seconds(10), extraCAFile: String? = nil,
            http1Only: Bool = false, engine: Engine = .nghttp2
        ) {
            self.maxInFlight = maxInFlight
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.maxStreamsPerConnection = maxStreamsPerConnection
            self.maxCleartextConnectionsPerHost = maxCleartextConnectionsPerHost
            self.connectTimeout = connectTimeout
            self.extraCAFile = extraCAFile
            self.http1Only = http1Only
            self.engine = engine
        }
    }

    /// HTTP/2 (over TLS, and h2c) on Herald's own client, unless `engine` says libcurl.
    private let http2: H2Loop?
    /// Whether `https://` and h2c requests go to `http2` (no proxy variable for them).
    private let http2ForTLS: Bool
    private let http2ForH2c: Bool
    /// Origins that declined HTTP/2 in ALPN: sent through `loop` from then on.
    private let declinedHTTP2 = Mutex<Set<String>>([])
    /// `https://` origins that `http2` does not carry: few connections, many streams each.
    private let loop: CurlLoop
    /// `http://` origins: up to `maxCleartextConnectionsPerHost` connections, one request each
    /// at a time. A multi handle of its own, since libcurl's cap on connections per host
    /// covers every origin of a multi handle.
    private let cleartextLoop: CurlLoop
    private let limiter: InFlightLimiter
    private let perOrigin: Mutex<[String: InFlightLimiter]> = Mutex([:])
    private let tlsOriginLimit: Int
    private let cleartextOriginLimit: Int
    private let http1Only: Bool
    private let cleartext = Mutex(CleartextProtocols())
    /// `herald_http_requests_in_flight`: requests sent and not yet answered.
    private let inFlight = Meter(label: "herald_http_requests_in_flight")

    /// - Throws: `HTTPClientError` when libcurl cannot start or the CA file cannot be read.
    public init(configuration: Configuration = .init(), logger: Logger) throws {
        loop = try CurlLoop(configuration: configuration, logger: logger)
        let environment = ProcessInfo.processInfo.environment
        http2 = configuration.engine == .nghttp2 && !configuration.http1Only ? try H2Loop(configuration: configuration) : nil
        http2ForTLS = !Self.proxySet(environment, secure: true)
        http2ForH2c = !Self.proxySet(environment, secure: false)
        var cleartextConfiguration = configuration
        cleartextConfiguration.maxConnectionsPerHost = max(1, configuration.maxCleartextConnectionsPerHost)
        cleartextConfiguration.extraCAFile = nil
        cleartextLoop = try CurlLoop(configuration: cleartextConfiguration, keepIdleConnections: true, logger: logger)
        limiter = InFlightLimiter(limit: configuration.maxInFlight, reserve: Self.urgentReserve)
        let connections = max(1, configuration.maxConnectionsPerHost)
        tlsOriginLimit = configuration.http1Only ? connections : connections * max(1, configuration.maxStreamsPerConnection)
        cleartextOriginLimit = max(1, configuration.maxCleartextConnectionsPerHost)
        http1Only = configuration.http1Only
    }

    /// Sends a request and returns the response, whatever its status.
    /// - Throws: `HTTPClientError` (timeout, connect, tls, shutdown, transfer) or
    ///   `CancellationError` when the task was cancelled.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        // The origin's turn first: a caller waiting for a busy origin holds no overall slot
        // that a request to another origin could use.
        let origin = Self.origin(of: request.url)
        let originTurn = originLimiter(for: origin, streams: carriedOverHTTP2(origin))
        try await originTurn.acquire(urgent: request.urgent)
        defer { originTurn.release() }
        try await limiter.acquire(urgent: request.urgent)
        defer { limiter.release() }
        inFlight.increment()
        defer { inFlight.decrement() }
        // A URL that others chose: libcurl alone checks each address it connects to.
        if request.connectGuard != nil { return try await (origin.hasPrefix("http://") ? cleartextLoop : loop).perform(request, over: .http1) }
        guard origin.hasPrefix("http://") else { return try await sendOverTLS(request, origin: origin) }
        if http1Only { return try await cleartextLoop.perform(request, over: .http1) }
        let wire = cleartext.withLock { $0.protocolFor(origin) }
        do {
            let response = try await sendCleartext(request, over: wire)
            cleartext.withLock { $0.answered(origin, over: wire) }
            return response
        } catch let error as HTTPClientError where wire == .http1 && cleartext.withLock({ $0.shouldTryH2c(origin, after: error) }) {
            do {
                let response = try await sendCleartext(request, over: .h2c)
                cleartext.withLock { $0.answered(origin, over: .h2c) }
                return response
            } catch let second as HTTPClientError {
                throw HTTPClientError(
                    kind: second.kind, message: "\(second.message) (over HTTP/1.1: \(error.message))", curlCode: second.curlCode,
                    requestSent: second.requestSent || error.requestSent)
            }
        }
    }

    private func sendOverTLS(_ request: HTTPRequest, origin: String) async throws -> HTTPResponse {
        if let http2, http2ForTLS, let target = RequestTarget(url: request.url), !declinedHTTP2.withLock({ $0.contains(origin) }) {
            do {
                return try await http2.perform(request, to: target)
            } catch is H2Declined {
                declinedHTTP2.withLock { _ = $0.insert(origin) }
            }
        }
        return try await loop.perform(request, over: http1Only ? .http1 : .tls)
    }

    /// A cleartext request: h2c on Herald's own client (connections reused), unless a proxy
    /// or `engine` says libcurl (one connection per request there); HTTP/1.1 on libcurl.
    private func sendCleartext(_ request: HTTPRequest, over wire: WireProtocol) async throws -> HTTPResponse {
        if wire == .h2c, let http2, http2ForH2c, let target = RequestTarget(url: request.url) {
            return try await http2.perform(request, to: target)
        }
        return try await cleartextLoop.perform(request, over: wire)
    }

    /// Whether a proxy variable applies to `https://` (`secure`) or `http://` requests
    /// (libcurl's names).
    static func proxySet(_ environment: [String: String], secure: Bool) -> Bool {
        let names = secure ? ["HTTPS_PROXY", "https_proxy"] : ["HTTP_PROXY", "http_proxy"]
        return (names + ["ALL_PROXY", "all_proxy"]).contains { !(environment[$0] ?? "").isEmpty }
    }

    /// Rereads `extraCAFile` if it changed since it was read: connections opened from now on
    /// trust what it holds now (open ones keep theirs).
    /// - Returns: whether it changed.
    /// - Throws: `HTTPClientError` when the changed file cannot be read; the CAs in use stay.
    public func reloadCAFile() throws -> Bool {
        let direct = try http2?.reloadCAFile() ?? false
        return try loop.reloadCAFile() || direct
    }

    /// What a cleartext origin was found to speak, for tests and diagnostics.
    func cleartextKnowledge(of url: String) -> CleartextProtocols.Knowledge {
        cleartext.withLock { $0.knowledge(of: Self.origin(of: url)) }
    }

    /// Slots of each limit that only urgent requests may take.
    static let urgentReserve = 2

    /// The most requests the loops held at once (what they ran plus what they queued).
    public var peakTransfers: Int { loop.peakTransfers + cleartextLoop.peakTransfers + (http2?.peakTransfers ?? 0) }

    /// The origin's own limit: streams over connections for `https://` and for an `http://`
    /// origin known to speak h2c on Herald's client (`streams`), connections for the others.
    private func originLimiter(for origin: String, streams: Bool) -> InFlightLimiter {
        let key = streams && origin.hasPrefix("http://") ? origin + " h2c" : origin
        return perOrigin.withLock { limiters in
            if let limiter = limiters[key] { return limiter }
            let limiter = InFlightLimiter(
                limit: origin.hasPrefix("http://") && !streams ? cleartextOriginLimit : tlsOriginLimit, reserve: Self.urgentReserve)
            limiters[key] = limiter
            return limiter
        }
    }

    /// Whether a request to `origin` goes out as a stream on Herald's HTTP/2 client: an
    /// `http://` origin once it is known to speak h2c (unless a proxy or the engine sends it
    /// through libcurl, one connection per request); `https://` is decided per request.
    private func carriedOverHTTP2(_ origin: String) -> Bool {
        guard origin.hasPrefix("http://"), !http1Only, http2 != nil, http2ForH2c else { return false }
        return cleartext.withLock { $0.protocolFor(origin) } == .h2c
    }

    /// `scheme://host:port` of a URL, lowercased as written (what libcurl pools connections by).
    /// Scans bytes: this runs for every request (Foundation's `range(of:)` cost more than the rest of `send`).
    static func origin(of url: String) -> String {
        let bytes = url.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
            bytes[colon...].starts(with: "://".utf8)
        else { return url.lowercased() }
        let rest = bytes[bytes.index(colon, offsetBy: 3)...]
        let end = rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) ?? rest.endIndex
        return String(url[..<end]).lowercased()
    }

    /// Connections opened so far (new TCP connections, not reused ones).
    public var connectionsOpened: Int { loop.connectionsOpened + cleartextLoop.connectionsOpened + (http2?.connectionsOpened ?? 0) }

    /// The combined CA files the client's loops wrote and have not removed yet.
    var caBundlePaths: [String] { loop.caBundlePaths + cleartextLoop.caBundlePaths }

    /// Fails what is in flight and stops the thread.
    public func shutdown() {
        http2?.stop()
        loop.stop()
        cleartextLoop.stop()
    }
}
