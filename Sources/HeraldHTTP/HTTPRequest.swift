/// One HTTP request for `HTTPClient`.
public struct HTTPRequest: Sendable {
    public var method: String
    /// `https://…` (HTTP/2 over TLS, negotiated with ALPN) or `http://…` (HTTP/1.1, or h2c
    /// when the server speaks only HTTP/2).
    public var url: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The whole transfer's limit, connection included.
    public var timeout: Duration
    /// Goes ahead of every waiting request, into slots kept free for it: for the few
    /// requests that the waiting ones depend on (an OAuth token fetch). Keep them rare.
    public var urgent: Bool
    /// For URLs that others choose (webhooks): asked with the numeric address of every
    /// connection before it is made; a reason refuses it (the request fails with `.refused`).
    /// Such a request goes through libcurl over HTTP/1.1, never through a proxy, and follows
    /// no redirect. Connections are pooled per client and a reused one is not asked about
    /// again: give guarded requests a client of their own (as the webhooks do), or one opened
    /// by an unguarded request could carry them.
    public var connectGuard: (@Sendable (String) -> String?)?
    /// Keep at most this many bytes of the answer's body and stop reading there (the status
    /// and headers are kept); nil: the whole body.
    public var maxResponseBytes: Int?

    public init(
        method: String = "GET", url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
        timeout: Duration = .seconds(30), urgent: Bool = false
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.urgent = urgent
        self.connectGuard = nil
        self.maxResponseBytes = nil
    }
}

/// A response: status, headers (names lowercased) and body.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]
    /// `2` for HTTP/2, `1.1` for HTTP/1.1.
    public var httpVersion: String

    public init(status: Int, headers: [String: String], body: [UInt8], httpVersion: String) {
        self.status = status
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
    }
}

/// Why a request got no response.
public struct HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The request's timeout passed.
        public static let timeout = Kind("timeout")
        /// The host could not be resolved or reached.
        public static let connect = Kind("connect")
        /// TLS failed: certificate, handshake or ALPN.
        public static let tls = Kind("tls")
        /// The client was shut down.
        public static let shutdown = Kind("shutdown")
        /// Anything else libcurl reports.
        public static let transfer = Kind("transfer")
        /// The request's `connectGuard` refused the address its host resolved to.
        public static let refused = Kind("refused")
        /// The URL cannot be sent to as it is (malformed, or a scheme the client does not
        /// speak): trying again cannot help.
        public static let badURL = Kind("bad URL")
        public var description: String { name }
    }

    public let kind: Kind
    public let message: String
    /// libcurl's CURLcode, when it came from libcurl.
    public let curlCode: Int?
    /// Whether the request had left (its head was written to the server) when it failed: the
    /// server may then have taken it and its answer be what was lost. False when it never
    /// left (no connection, TLS refused, the address refused): sending it again is safe.
    public var requestSent: Bool

    public init(kind: Kind, message: String, curlCode: Int? = nil, requestSent: Bool = false) {
        self.kind = kind
        self.message = message
        self.curlCode = curlCode
        self.requestSent = requestSent
    }

    public var description: String { message }
}
