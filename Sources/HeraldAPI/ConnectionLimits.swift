/// How long `herald serve` waits on a client and how many connections one address may
/// hold, so that silent, slow or numerous sockets cannot hold the server's file descriptors
/// (1,100 silent sockets from one client made `/healthz` time out for everyone).
public struct ConnectionLimits: Sendable, Equatable {
    /// A connection with no request in progress is closed after this long: an idle
    /// keep-alive connection, and one whose request head has not arrived whole (headers sent
    /// a line at a time count as not arrived). HTTP/2: a connection with no open stream.
    public var idleTimeout: Duration
    /// From a request's head to the end of its body; past it the connection is closed (a
    /// body sent a byte at a time).
    public var requestTimeout: Duration
    /// From a TLS connection's opening to its completed handshake.
    public var handshakeTimeout: Duration
    /// Connections open at once from one client address; more are closed on arrival.
    public var perAddress: Int

    public init(
        idleTimeout: Duration = .seconds(30), requestTimeout: Duration = .seconds(30), handshakeTimeout: Duration = .seconds(10),
        perAddress: Int = 256
    ) {
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
        self.handshakeTimeout = handshakeTimeout
        self.perAddress = perAddress
    }
}
