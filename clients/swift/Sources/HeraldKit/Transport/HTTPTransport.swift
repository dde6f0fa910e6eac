import Foundation

/// One HTTP request as the client makes it: a method, a path with its query, headers, a body.
public struct HTTPRequestData: Sendable {
    public var method: String
    /// Path and query, e.g. `/v1/activities?limit=20`.
    public var target: String
    public var headers: [(name: String, value: String)]
    public var body: Data?

    public init(method: String, target: String, headers: [(name: String, value: String)] = [], body: Data? = nil) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }
}

/// Its answer. Header names in lower case.
public struct HTTPResponseData: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Carries requests to a server. The library's own: URLSession on Apple platforms, SwiftNIO
/// on Linux; an app may bring another (a proxy, a test double for its own tests).
public protocol HTTPTransport: Sendable {
    /// Sends `request` to `server` (scheme, host and port); throws `HeraldError.transport`
    /// when no answer came.
    func send(_ request: HTTPRequestData, to server: URL, timeout: Duration) async throws -> HTTPResponseData
}

/// One message from a WebSocket.
public enum WebSocketIncoming: Sendable, Equatable {
    case text(String)
    /// The socket closed: the close code (1006 when the connection broke without one).
    case closed(code: Int)
}

/// An open WebSocket.
public protocol WebSocketConnection: Sendable {
    /// The next text message, or `.closed`; pings are answered inside.
    func receive() async throws -> WebSocketIncoming
    func send(text: String) async throws
    func close(code: Int) async
}

/// Why a WebSocket could not be opened.
public enum WebSocketRefusal: Error, Sendable {
    /// The server answered the upgrade with an HTTP status (and perhaps `Retry-After`).
    case status(Int, retryAfter: Int?, body: Data)
    /// No answer: the network, a refused connection.
    case transport(String)
}

/// Opens WebSockets: `URLSessionWebSocketTask` on Apple platforms, SwiftNIO on Linux. A
/// refusal is thrown as `WebSocketRefusal`.
public protocol WebSocketTransport: Sendable {
    func connect(to url: URL, headers: [(name: String, value: String)], timeout: Duration) async throws -> any WebSocketConnection
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// The transports of the platform the app runs on: URLSession's, or on Linux with the trait
/// `NIOTransports`, SwiftNIO's.
public enum PlatformTransports {
    public static var http: any HTTPTransport {
        #if os(Linux) && NIOTransports
            NIOHTTPTransport()
        #else
            URLSessionHTTPTransport()
        #endif
    }
    public static var webSocket: any WebSocketTransport {
        #if os(Linux) && NIOTransports
            NIOWebSocketTransport()
        #else
            URLSessionWebSocketTransport()
        #endif
    }
}
