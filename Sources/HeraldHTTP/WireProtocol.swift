import Synchronization

/// How a request travels to its origin.
///
/// - `tls`: `https://`, HTTP/2 negotiated by ALPN (HTTP/1.1 when the server declines),
///   many streams on few connections.
/// - `http1`: cleartext HTTP/1.1 with keep-alive, one request at a time per connection,
///   several connections per origin.
/// - `h2c`: cleartext HTTP/2 with prior knowledge: many streams on few connections on
///   Herald's own client; on libcurl (`HERALD_HTTP_ENGINE=libcurl`, or behind a proxy) one
///   request per connection. Debian 12's libcurl (7.88.1) cannot reuse an h2c connection:
///   the second request on it fails with "Error in the HTTP2 framing layer" (curl issue
///   10634, fixed in 7.89), so there every h2c request opens a connection of its own and
///   closes it after the answer.
enum WireProtocol: Sendable, Equatable {
    case tls, http1, h2c
}

/// What a cleartext origin speaks, learnt from its answers (a pure decision, no I/O).
///
/// A `http://` origin is first spoken to in HTTP/1.1, which nearly every server, gateway and
/// proxy understands and which reuses its connections. A server that speaks only HTTP/2
/// with prior knowledge answers an HTTP/1.1 request with an HTTP/2 GOAWAY frame or by
/// closing the connection, without reading the request as one; such an answer (and only
/// such) switches the origin to h2c, and the request is sent again over h2c. Nothing the
/// server could have acted on is sent twice: a server that read an HTTP/1.1 request answers
/// in HTTP/1.1. Once an origin has answered in either protocol it keeps it.
struct CleartextProtocols: Sendable {
    enum Knowledge: Sendable, Equatable {
        case unknown, http1, h2c
    }

    private var origins: [String: Knowledge] = [:]

    func knowledge(of origin: String) -> Knowledge { origins[origin] ?? .unknown }

    /// The protocol for the next request to `origin`.
    func protocolFor(_ origin: String) -> WireProtocol {
        knowledge(of: origin) == .h2c ? .h2c : .http1
    }

    /// The origin answered (any HTTP status) over `wire`.
    mutating func answered(_ origin: String, over wire: WireProtocol) {
        switch wire {
        case .http1: origins[origin] = .http1
        case .h2c: origins[origin] = .h2c
        case .tls: break
        }
    }

    /// Whether a failed HTTP/1.1 request to an origin of unknown protocol should be sent
    /// again over h2c: only when the failure shows the server did not speak HTTP/1.1.
    func shouldTryH2c(_ origin: String, after error: HTTPClientError) -> Bool {
        knowledge(of: origin) == .unknown && error.meansNotHTTP1
    }
}

extension HTTPClientError {
    /// libcurl's words for "the peer did not answer in HTTP/1.x": nothing at all on a new
    /// connection (CURLE_GOT_NOTHING, 52), bytes that are no HTTP/1 status line
    /// (CURLE_UNSUPPORTED_PROTOCOL for "HTTP/0.9", 1; CURLE_WEIRD_SERVER_REPLY, 8), or the
    /// connection reset before any answer (CURLE_RECV_ERROR, 56).
    var meansNotHTTP1: Bool {
        guard let curlCode else { return false }
        return [1, 8, 52, 56].contains(curlCode)
    }
}
