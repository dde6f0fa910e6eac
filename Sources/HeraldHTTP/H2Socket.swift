import CHTTP2
import Glibc

/// The socket under an HTTP/2 connection: a non-blocking TCP connection that tries the
/// resolved addresses in turn, with TLS on it for `https://` (the server's certificate and
/// host name verified, `h2` asked for in ALPN; reads and writes through OpenSSL) or without
/// for h2c. Only the loop thread touches it.
///
/// Each call says what happened and what to wait for next (`interest` on `fd`); it never
/// blocks.
final class H2Socket {
    enum Phase: Equatable { case resolving, connecting, handshaking, ready, closed }

    /// Where connecting stands after a step.
    enum Step {
        /// Wait for `interest` on `fd`, then call `advance`.
        case waiting
        /// Connected (TLS up and HTTP/2 chosen, for `https://`).
        case ready
        case failed(HTTPClientError)
    }

    enum ReadResult {
        case bytes(Int)
        /// Nothing more for now; when `wantsWrite`, OpenSSL must write before it can read.
        case wouldBlock(wantsWrite: Bool)
        case failed(HTTPClientError)
    }

    enum WriteResult {
        case wrote(Int)
        case wouldBlock
        case failed(HTTPClientError)
    }

    let target: RequestTarget
    private(set) var phase = Phase.resolving
    private(set) var fd: Int32 = -1
    /// Counts the sockets opened: a new socket may get the number of a closed one.
    private(set) var socketGeneration = 0
    /// `EPOLLIN`/`EPOLLOUT` bits to wait for while connecting.
    private(set) var interest: UInt32 = 0
    /// The server finished the handshake without choosing HTTP/2.
    private(set) var declinedHTTP2 = false

    /// nil for h2c.
    private let tls: TLSContext?
    private var addresses: [[UInt8]] = []
    private var ssl: OpaquePointer?

    init(target: RequestTarget, tls: TLSContext?) {
        self.target = target
        self.tls = tls
    }

    deinit { close() }

    // MARK: Connecting

    /// The resolver's answer: addresses to try in order (each a `sockaddr`), or why none.
    func resolved(_ result: Result<[[UInt8]], HTTPClientError>) -> Step {
        guard phase == .resolving else { return .waiting }
        switch result {
        case .success(let addresses):
            self.addresses = addresses
            return connectNext(lastError: nil)
        case .failure(let error):
            close()
            return .failed(error)
        }
    }

    /// The socket is ready for what was asked while connecting or handshaking.
    func advance() -> Step {
        switch phase {
        case .connecting:
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else {
                closeSocket()
                return connectNext(lastError: error)
            }
            return connected()
        case .handshaking:
            return handshake()
        case .resolving, .ready, .closed:
            return .waiting
        }
    }

    private func connectNext(lastError: Int32?) -> Step {
        var lastError = lastError
        while !addresses.isEmpty {
            var address = addresses.removeFirst()
            let family = address.withUnsafeBytes { $0.load(as: sockaddr.self).sa_family }
            let socket = Glibc.socket(Int32(family), Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard socket >= 0 else {
                lastError = errno
                continue
            }
            socketGeneration += 1
            Self.configure(socket)
            let length = socklen_t(address.count)
            let result = address.withUnsafeMutableBytes {
                Glibc.connect(socket, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
            }
            fd = socket
            if result == 0 { return connected() }
            if errno == EINPROGRESS {
                phase = .connecting
                interest = EPOLLOUT.rawValue
                return .waiting
            }
            lastError = errno
            closeSocket()
        }
        close()
        let reason = lastError.map { String(cString: strerror($0)) } ?? "no address"
        return .failed(HTTPClientError(kind: .connect, message: "cannot connect to \(target.authority): \(reason)"))
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

    private func connected() -> Step {
        guard let tls else {
            phase = .ready
            interest = EPOLLIN.rawValue
            return .ready
        }
        return startTLS(tls)
    }

    private func startTLS(_ tls: TLSContext) -> Step {
        guard let ssl = SSL_new(tls.context) else {
            close()
            return .failed(HTTPClientError(kind: .tls, message: "OpenSSL could not create a connection"))
        }
        self.ssl = ssl
        SSL_set_fd(ssl, fd)
        SSL_set_connect_state(ssl)
        // An IP address is checked against the certificate's addresses; a name gets SNI and
        // is checked against its names.
        if X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), target.host) != 1 {
            ERR_clear_error()
            _ = herald_ssl_set_host_name(ssl, target.host)
            SSL_set1_host(ssl, target.host)
        }
        phase = .handshaking
        return handshake()
    }

    private func handshake() -> Step {
        guard let ssl else { return .waiting }
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            var selected: UnsafePointer<UInt8>?
            var length: UInt32 = 0
            SSL_get0_alpn_selected(ssl, &selected, &length)
            guard let selected, length == 2, selected[0] == UInt8(ascii: "h"), selected[1] == UInt8(ascii: "2") else {
                declinedHTTP2 = true
                close()
                return .failed(HTTPClientError(kind: .tls, message: "\(target.authority) did not agree to HTTP/2 (ALPN)"))
            }
            phase = .ready
            interest = EPOLLIN.rawValue
            return .ready
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ:
            interest = EPOLLIN.rawValue
            return .waiting
        case SSL_ERROR_WANT_WRITE:
            interest = EPOLLIN.rawValue | EPOLLOUT.rawValue
            return .waiting
        default:
            let verify = SSL_get_verify_result(ssl)
            let reason = verify != X509_V_OK ? String(cString: X509_verify_cert_error_string(verify)) : Self.openSSLError()
            close()
            return .failed(HTTPClientError(kind: .tls, message: "TLS with \(target.authority) failed: \(reason)"))
        }
    }

    // MARK: Reading and writing

    /// Reads (and decrypts) what has arrived into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        guard phase == .ready else { return .failed(closedError) }
        guard let ssl else {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count > 0 { return .bytes(count) }
            if count == 0 { return .failed(HTTPClientError(kind: .transfer, message: "\(target.authority) closed the connection")) }
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wouldBlock(wantsWrite: false) }
            return .failed(
                HTTPClientError(kind: .transfer, message: "the connection to \(target.authority) failed: \(String(cString: strerror(errno)))"))
        }
        let count = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
        if count > 0 { return .bytes(Int(count)) }
        switch SSL_get_error(ssl, count) {
        case SSL_ERROR_WANT_READ: return .wouldBlock(wantsWrite: false)
        case SSL_ERROR_WANT_WRITE: return .wouldBlock(wantsWrite: true)
        case SSL_ERROR_ZERO_RETURN: return .failed(HTTPClientError(kind: .transfer, message: "\(target.authority) closed the connection"))
        default: return .failed(HTTPClientError(kind: .transfer, message: "the connection to \(target.authority) failed: \(Self.openSSLError())"))
        }
    }

    /// Sends (encrypted) what it can of `bytes`. After `.wouldBlock`, call again with the
    /// same bytes once the socket is writable.
    func write(_ bytes: UnsafeRawBufferPointer) -> WriteResult {
        guard phase == .ready else { return .failed(closedError) }
        guard let ssl else {
            let count = send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count > 0 { return .wrote(count) }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wouldBlock }
            return .failed(HTTPClientError(kind: .transfer, message: "writing to \(target.authority) failed: \(String(cString: strerror(errno)))"))
        }
        let written = SSL_write(ssl, bytes.baseAddress, Int32(bytes.count))
        if written > 0 { return .wrote(Int(written)) }
        switch SSL_get_error(ssl, written) {
        case SSL_ERROR_WANT_WRITE, SSL_ERROR_WANT_READ: return .wouldBlock
        default: return .failed(HTTPClientError(kind: .transfer, message: "writing to \(target.authority) failed: \(Self.openSSLError())"))
        }
    }

    private var closedError: HTTPClientError {
        HTTPClientError(kind: .transfer, message: "the connection to \(target.authority) is closed")
    }

    // MARK: Ending

    func close() {
        if let ssl { SSL_free(ssl) }
        ssl = nil
        closeSocket()
        phase = .closed
        interest = 0
    }

    private func closeSocket() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    private static func openSSLError() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return errno != 0 ? String(cString: strerror(errno)) : "the connection ended" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
