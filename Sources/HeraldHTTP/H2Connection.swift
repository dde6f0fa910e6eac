import CHTTP2
import Glibc

/// One HTTP/2 connection to one origin: its nghttp2 session and the requests on it, over a
/// `H2Socket`. Only the loop thread touches it.
///
/// It is `connecting` (resolving, connecting, handshaking: the stream's business), then
/// `open`, then `closed`. Requests submitted before it is open wait in it. Everything a call
/// produces is left where the loop collects it: `interest` (what to wait for on `fd`),
/// `moved` (requests it could not send, to go to another connection) and `finishedIDs`. A
/// request that got its answer, or failed after it left, is finished here.
///
/// Safety (`@unchecked Sendable`): only the loop thread calls it; the resolver thread only
/// carries the reference back to the loop's locked queue.
final class H2Connection: @unchecked Sendable {
    enum State { case connecting, open, closed }

    let target: RequestTarget
    let connectDeadline: UInt64
    private(set) var state = State.connecting
    /// The server sent GOAWAY or the connection failed: no new requests go here.
    private(set) var goingAway = false
    /// When a PING went out that nothing has been received since (monotonic nanoseconds).
    private(set) var probeSent: UInt64?
    /// Requests that never left and should go to another connection.
    var moved: [H2Exchange] = []
    /// Ids of the requests finished here (answered or failed), for the loop to forget.
    var finishedIDs: [Int] = []

    private let socket: H2Socket
    private let maxStreams: Int
    private var session: OpaquePointer?
    private var waiting: [H2Exchange] = []
    private var streams: [Int32: H2Exchange] = [:]
    private var output: [UInt8] = []
    private var outputOffset = 0
    /// What to wait for on the socket once open.
    private var openInterest: UInt32 = EPOLLIN.rawValue

    /// - Parameter tls: nil for h2c.
    init(target: RequestTarget, tls: TLSContext?, maxStreams: Int, connectDeadline: UInt64) {
        self.target = target
        self.socket = H2Socket(target: target, tls: tls)
        self.maxStreams = maxStreams
        self.connectDeadline = connectDeadline
    }

    deinit { release() }

    var fd: Int32 { socket.fd }
    /// Counts the sockets the stream opened: a new socket may get the number of a closed one.
    var socketGeneration: Int { socket.socketGeneration }
    /// `EPOLLIN`/`EPOLLOUT` bits the loop should wait for on `fd`.
    var interest: UInt32 {
        switch state {
        case .connecting: socket.interest
        case .open: openInterest
        case .closed: 0
        }
    }
    /// The server finished the TLS handshake without choosing HTTP/2.
    var declinedHTTP2: Bool { socket.declinedHTTP2 }

    /// Requests waiting here or in flight on it.
    var load: Int { waiting.count + streams.count }

    /// Streams it may carry at once: ours, or fewer when the server says so.
    var streamLimit: Int {
        guard let session, state == .open else { return maxStreams }
        return min(maxStreams, Int(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)))
    }

    var acceptsRequests: Bool { state != .closed && !goingAway }

    // MARK: Connecting

    /// The resolver's answer: addresses to try in order (each a `sockaddr`), or why none.
    func resolved(_ result: Result<[[UInt8]], HTTPClientError>) {
        guard state == .connecting else { return }
        apply(socket.resolved(result))
    }

    private func apply(_ step: H2Socket.Step) {
        switch step {
        case .waiting: break
        case .ready: startSession()
        case .failed(let error): fail(error)
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
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: UInt32(Self.window))
        ]
        nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, Int32(Self.connectionWindow))
        state = .open
        openInterest = EPOLLIN.rawValue
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
                finish(
                    exchange,
                    .failure(
                        HTTPClientError(kind: .transfer, message: "the request could not be framed: \(String(cString: nghttp2_strerror(stream)))")))
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

    /// When the connection was first seen with request data it could not send because the
    /// server's window (the connection's or the stream's) was spent (monotonic nanoseconds);
    /// nil while it is not.
    private var windowSpentSince: UInt64?

    /// Sends a PING when request data has waited `limit` for the server's flow-control window
    /// and nothing arrived meanwhile: the server must answer it, and whatever it held back
    /// (a WINDOW_UPDATE not yet flushed) goes out with the answer; a server that answers
    /// nothing is dropped after `H2Loop.probeTimeout`, like one that went silent.
    /// - Returns: whether a PING was queued (flush the connection).
    func probeIfStalled(now: UInt64, after limit: UInt64) -> Bool {
        guard state == .open, let session else { return false }
        let connectionWindowSpent = nghttp2_session_get_remote_window_size(session) <= 0
        let waiting = streams.contains { stream, exchange in
            exchange.bodyOffset < exchange.request.body.count
                && (connectionWindowSpent || nghttp2_session_get_stream_remote_window_size(session, stream) <= 0)
        }
        guard waiting else {
            windowSpentSince = nil
            return false
        }
        guard let since = windowSpentSince else {
            windowSpentSince = now
            return false
        }
        guard now - since >= limit, probeSent == nil else { return false }
        windowSpentSince = now
        probe(now: now)
        return true
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
        case .closed:
            return
        case .connecting:
            apply(socket.advance())
        case .open:
            if events & (EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { read(into: buffer) }
            if state == .open { flush() }
        }
    }

    private func read(into buffer: UnsafeMutableRawBufferPointer) {
        guard let session else { return }
        while state == .open {
            switch socket.read(into: buffer) {
            case .bytes(let count):
                probeSent = nil
                windowSpentSince = nil
                let used = nghttp2_session_mem_recv(session, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count)
                if used < 0 {
                    fail(
                        HTTPClientError(
                            kind: .transfer,
                            message: "HTTP/2 framing error from \(target.authority): \(String(cString: nghttp2_strerror(Int32(used))))"))
                }
            case .wouldBlock(let wantsWrite):
                if wantsWrite { openInterest |= EPOLLOUT.rawValue }
                return
            case .failed(let error):
                fail(error)
            }
        }
    }

    /// Writes what nghttp2 has to send, gathered into few TLS records.
    func flush() {
        guard state == .open, let session else { return }
        while true {
            while outputOffset < output.count {
                let result = output.withUnsafeBytes { socket.write(UnsafeRawBufferPointer(rebasing: $0[outputOffset...])) }
                switch result {
                case .wrote(let count):
                    outputOffset += count
                case .wouldBlock:
                    openInterest = EPOLLIN.rawValue | EPOLLOUT.rawValue
                    return
                case .failed(let error):
                    fail(error)
                    return
                }
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
        openInterest = EPOLLIN.rawValue
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
        socket.close()
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
