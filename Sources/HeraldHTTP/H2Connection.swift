import CHTTP2
import Glibc

/// One TLS connection carrying HTTP/2 streams to one origin: its socket, its OpenSSL
/// connection and its nghttp2 session. Only the loop thread touches it.
///
/// It goes through `resolving` (the loop resolves the host elsewhere), `connecting`,
/// `handshaking` and `open` to `closed`. Requests submitted before it is open wait in it.
/// Everything a call produces is left where the loop collects it: `interest` (what to wait
/// for on `fd`) and `moved` (requests it could not send, to go to another connection). A
/// request that got its answer, or failed after it left, is finished here.
///
/// Safety (`@unchecked Sendable`): only the loop thread calls it; the resolver thread only
/// carries the reference back to the loop's locked queue.
final class H2Connection: @unchecked Sendable {
    enum State { case resolving, connecting, handshaking, open, closed }

    let target: RequestTarget
    let connectDeadline: UInt64
    private(set) var state = State.resolving
    private(set) var fd: Int32 = -1
    /// `EPOLLIN`/`EPOLLOUT` bits the loop should wait for on `fd`.
    private(set) var interest: UInt32 = 0
    /// The server sent GOAWAY or the connection failed: no new requests go here.
    private(set) var goingAway = false
    /// The server finished the TLS handshake without choosing HTTP/2.
    private(set) var declinedHTTP2 = false
    /// When a PING went out that nothing has been received since (monotonic nanoseconds).
    private(set) var probeSent: UInt64?
    /// Requests that never left and should go to another connection.
    var moved: [H2Exchange] = []
    /// Ids of the requests finished here (answered or failed), for the loop to forget.
    var finishedIDs: [Int] = []
    /// Counts the sockets opened: a new socket may get the number of a closed one.
    private(set) var socketGeneration = 0

    private let tls: TLSContext
    private let maxStreams: Int
    private var addresses: [[UInt8]] = []
    private var ssl: OpaquePointer?
    private var session: OpaquePointer?
    private var waiting: [H2Exchange] = []
    private var streams: [Int32: H2Exchange] = [:]
    private var output: [UInt8] = []
    private var outputOffset = 0

    init(target: RequestTarget, tls: TLSContext, maxStreams: Int, connectDeadline: UInt64) {
        self.target = target
        self.tls = tls
        self.maxStreams = maxStreams
        self.connectDeadline = connectDeadline
    }

    deinit { release() }

    /// Requests waiting here or in flight on it.
    var load: Int { waiting.count + streams.count }

    /// Streams it may carry at once: ours, or fewer when the server says so.
    var streamLimit: Int {
        guard let session, state == .open else { return maxStreams }
        return min(maxStreams, Int(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)))
    }

    var acceptsRequests: Bool { state != .closed && !goingAway }

    /// Every request here, waiting or in flight.
    var exchanges: [H2Exchange] { waiting + Array(streams.values) }

    // MARK: Connecting

    /// The resolver's answer: addresses to try in order (each a `sockaddr`), or why none.
    func resolved(_ result: Result<[[UInt8]], HTTPClientError>) {
        guard state == .resolving else { return }
        switch result {
        case .success(let addresses):
            self.addresses = addresses
            connectNext(lastError: nil)
        case .failure(let error):
            fail(error)
        }
    }

    private func connectNext(lastError: Int32?) {
        while !addresses.isEmpty {
            var address = addresses.removeFirst()
            let family = address.withUnsafeBytes { $0.load(as: sockaddr.self).sa_family }
            let socket = Glibc.socket(Int32(family), Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard socket >= 0 else { continue }
            socketGeneration += 1
            Self.configure(socket)
            let length = socklen_t(address.count)
            let result = address.withUnsafeMutableBytes {
                Glibc.connect(socket, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
            }
            fd = socket
            if result == 0 {
                startTLS()
                return
            }
            if errno == EINPROGRESS {
                state = .connecting
                interest = EPOLLOUT.rawValue
                return
            }
            let error = errno
            Glibc.close(socket)
            fd = -1
            connectNext(lastError: error)
            return
        }
        let reason = lastError.map { String(cString: strerror($0)) } ?? "no address"
        fail(HTTPClientError(kind: .connect, message: "cannot connect to \(target.authority): \(reason)"))
    }

    /// No delay for small writes; keepalives, so that an idle connection whose server
    /// vanished is noticed within about a minute instead of on the next request.
    private static func configure(_ socket: Int32) {
        func set(_ level: Int32, _ option: Int32, _ value: Int32) {
            var value = value
            setsockopt(socket, level, option, &value, socklen_t(MemoryLayout<Int32>.size))
        }
        set(Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        set(SOL_SOCKET, SO_KEEPALIVE, 1)
        set(Int32(IPPROTO_TCP), TCP_KEEPIDLE, 30)
        set(Int32(IPPROTO_TCP), TCP_KEEPINTVL, 10)
        set(Int32(IPPROTO_TCP), TCP_KEEPCNT, 3)
    }

    private func startTLS() {
        guard let ssl = SSL_new(tls.context) else {
            fail(HTTPClientError(kind: .tls, message: "OpenSSL could not create a connection"))
            return
        }
        self.ssl = ssl
        SSL_set_fd(ssl, fd)
        SSL_set_connect_state(ssl)
        let parameters = SSL_get0_param(ssl)
        if X509_VERIFY_PARAM_set1_ip_asc(parameters, target.host) != 1 {
            ERR_clear_error()
            _ = herald_ssl_set_host_name(ssl, target.host)
            SSL_set1_host(ssl, target.host)
        }
        state = .handshaking
        handshake()
    }

    private func handshake() {
        guard let ssl else { return }
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            var selected: UnsafePointer<UInt8>?
            var length: UInt32 = 0
            SSL_get0_alpn_selected(ssl, &selected, &length)
            guard let selected, length == 2, selected[0] == UInt8(ascii: "h"), selected[1] == UInt8(ascii: "2") else {
                declinedHTTP2 = true
                fail(HTTPClientError(kind: .tls, message: "\(target.authority) did not agree to HTTP/2 (ALPN)"))
                return
            }
            startSession()
            return
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: interest = EPOLLIN.rawValue
        case SSL_ERROR_WANT_WRITE: interest = EPOLLIN.rawValue | EPOLLOUT.rawValue
        default:
            let verify = SSL_get_verify_result(ssl)
            let reason = verify != X509_V_OK ? String(cString: X509_verify_cert_error_string(verify)) : Self.openSSLError()
            fail(HTTPClientError(kind: .tls, message: "TLS with \(target.authority) failed: \(reason)"))
        }
    }

    private func startSession() {
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        H2Callbacks.install(on: callbacks)
        var session: OpaquePointer?
        let created = nghttp2_session_client_new(&session, callbacks, Unmanaged.passUnretained(self).toOpaque())
        nghttp2_session_callbacks_del(callbacks)
        guard created == 0, let session else {
            fail(HTTPClientError(kind: .transfer, message: "nghttp2 could not start a session"))
            return
        }
        self.session = session
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: 100),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: UInt32(Self.window)),
        ]
        nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, Int32(Self.connectionWindow))
        state = .open
        interest = EPOLLIN.rawValue
        let queued = waiting
        waiting.removeAll()
        for exchange in queued { submit(exchange) }
        flush()
    }

    /// The flow-control window a stream opens with, as large as libcurl's (32 MB): no answer
    /// waits for a WINDOW_UPDATE.
    private static let window = 32 << 20
    /// The connection's window: several large answers at once.
    private static let connectionWindow = 256 << 20

    // MARK: Requests

    /// Sends `exchange` as a new stream, or keeps it until the connection is open. Call
    /// `flush()` after a batch.
    func submit(_ exchange: H2Exchange) {
        exchange.connection = self
        guard state == .open, let session else {
            waiting.append(exchange)
            return
        }
        let stream = H2Request.submit(exchange, on: session)
        guard stream > 0 else {
            exchange.connection = nil
            if stream == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE.rawValue || stream == NGHTTP2_ERR_INVALID_STATE.rawValue {
                goingAway = true
                moved.append(exchange)
            } else {
                finish(exchange, .failure(HTTPClientError(kind: .transfer, message: "the request could not be framed: \(String(cString: nghttp2_strerror(stream)))")))
            }
            return
        }
        exchange.streamID = stream
        streams[stream] = exchange
    }

    /// Sends a PING unless one is out: anything received afterwards shows the connection
    /// alive (the loop calls this when a request on it timed out, and fails the connection
    /// when nothing comes back).
    func probe(now: UInt64) {
        guard state == .open, probeSent == nil, let session else { return }
        nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
        probeSent = now
    }

    /// Takes `exchange` back (cancelled or timed out): a stream is reset.
    func withdraw(_ exchange: H2Exchange) {
        exchange.connection = nil
        if let index = waiting.firstIndex(where: { $0 === exchange }) {
            waiting.remove(at: index)
            return
        }
        guard let stream = exchange.streamID, streams.removeValue(forKey: stream) != nil, let session else { return }
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, NGHTTP2_CANCEL.rawValue)
    }

    // MARK: I/O

    /// The socket is ready for what `events` says.
    func handle(events: UInt32, buffer: UnsafeMutableRawBufferPointer) {
        switch state {
        case .resolving, .closed:
            return
        case .connecting:
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if error == 0 {
                startTLS()
            } else {
                Glibc.close(fd)
                fd = -1
                connectNext(lastError: error)
            }
        case .handshaking:
            handshake()
        case .open:
            if events & (EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { read(into: buffer) }
            if state == .open { flush() }
        }
    }

    private func read(into buffer: UnsafeMutableRawBufferPointer) {
        guard let ssl, let session else { return }
        while state == .open {
            let count = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
            if count > 0 {
                probeSent = nil
                let used = nghttp2_session_mem_recv(session, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), Int(count))
                if used < 0 {
                    fail(HTTPClientError(kind: .transfer, message: "HTTP/2 framing error from \(target.authority): \(String(cString: nghttp2_strerror(Int32(used))))"))
                    return
                }
                continue
            }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ:
                return
            case SSL_ERROR_WANT_WRITE:
                interest |= EPOLLOUT.rawValue
                return
            case SSL_ERROR_ZERO_RETURN:
                fail(HTTPClientError(kind: .transfer, message: "\(target.authority) closed the connection"))
            default:
                fail(HTTPClientError(kind: .transfer, message: "the connection to \(target.authority) failed: \(Self.openSSLError())"))
            }
        }
    }

    /// Writes what nghttp2 has to send, gathered into few TLS records.
    func flush() {
        guard state == .open, let ssl, let session else { return }
        while true {
            while outputOffset < output.count {
                let remaining = output.count - outputOffset
                let written = output.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + outputOffset, Int32(remaining)) }
                if written > 0 {
                    outputOffset += Int(written)
                    continue
                }
                switch SSL_get_error(ssl, written) {
                case SSL_ERROR_WANT_WRITE, SSL_ERROR_WANT_READ:
                    interest = EPOLLIN.rawValue | EPOLLOUT.rawValue
                default:
                    fail(HTTPClientError(kind: .transfer, message: "writing to \(target.authority) failed: \(Self.openSSLError())"))
                }
                return
            }
            output.removeAll(keepingCapacity: true)
            outputOffset = 0
            var frames: UnsafePointer<UInt8>?
            while output.count < Self.writeBatch {
                let count = nghttp2_session_mem_send(session, &frames)
                if count < 0 {
                    fail(HTTPClientError(kind: .transfer, message: "nghttp2 could not frame: \(String(cString: nghttp2_strerror(Int32(count))))"))
                    return
                }
                guard count > 0, let frames else { break }
                output.append(contentsOf: UnsafeBufferPointer(start: frames, count: count))
            }
            if output.isEmpty { break }
        }
        interest = EPOLLIN.rawValue
        if nghttp2_session_want_read(session) == 0, nghttp2_session_want_write(session) == 0 {
            close()
        } else if goingAway, streams.isEmpty {
            close()
        }
    }

    /// Bytes gathered before a TLS write.
    private static let writeBatch = 64 * 1024

    // MARK: Ending

    /// Ends the connection: requests that never left move on, the rest fail with `error`
    /// (before the connection opened, all fail: another connection would fail alike, unless
    /// the server declined HTTP/2, when they go another way).
    func fail(_ error: HTTPClientError) {
        let wasOpen = state == .open
        state = .closed
        goingAway = true
        for exchange in waiting {
            exchange.connection = nil
            if wasOpen || declinedHTTP2 { moved.append(exchange) } else { finish(exchange, .failure(error)) }
        }
        waiting.removeAll()
        for exchange in streams.values {
            exchange.connection = nil
            exchange.streamID = nil
            if exchange.headersSent { finish(exchange, .failure(error)) } else { moved.append(exchange) }
        }
        streams.removeAll()
        release()
    }

    /// Closes an idle connection (nothing waiting or in flight) or one the server ended.
    func close() {
        guard state != .closed else { return }
        fail(HTTPClientError(kind: .transfer, message: "the connection to \(target.authority) was closed"))
    }

    private func finish(_ exchange: H2Exchange, _ result: Result<HTTPResponse, any Error>) {
        exchange.finish(result)
        finishedIDs.append(exchange.id)
    }

    private func release() {
        if let session { nghttp2_session_del(session) }
        session = nil
        if let ssl { SSL_free(ssl) }
        ssl = nil
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        interest = 0
    }

    private static func openSSLError() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return errno != 0 ? String(cString: strerror(errno)) : "the connection ended" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: Called from nghttp2's callbacks

    func exchange(onStream stream: Int32) -> H2Exchange? { streams[stream] }

    func headersLeft(onStream stream: Int32) { streams[stream]?.headersSent = true }

    func headersNotSent(onStream stream: Int32) {
        guard let exchange = streams.removeValue(forKey: stream) else { return }
        exchange.streamID = nil
        exchange.connection = nil
        moved.append(exchange)
    }

    func streamClosed(_ stream: Int32, errorCode: UInt32) {
        guard let exchange = streams.removeValue(forKey: stream) else { return }
        exchange.streamID = nil
        exchange.connection = nil
        if errorCode == NGHTTP2_NO_ERROR.rawValue, exchange.status > 0 {
            finish(exchange, .success(exchange.response))
        } else if !exchange.headersSent || errorCode == NGHTTP2_REFUSED_STREAM.rawValue {
            moved.append(exchange)
        } else {
            let reason = String(cString: nghttp2_http2_strerror(errorCode))
            let received = exchange.status > 0 ? " after status \(exchange.status) and \(exchange.body.count) bytes of the answer" : ""
            finish(exchange, .failure(HTTPClientError(kind: .transfer, message: "\(target.authority) reset the stream: \(reason)\(received)")))
        }
    }

    func serverIsGoingAway() { goingAway = true }
}
