import CHTTP2
import Foundation
import Glibc
import Synchronization

/// Herald's own HTTP/2 client: nghttp2 frames, OpenSSL encrypts (`https://`; h2c goes in
/// the clear), and one thread waits on every socket with one `epoll`, writing each
/// connection's frames in a few TLS records. It replaces libcurl for HTTP/2, where libcurl
/// 7.88 wakes every transfer of a connection whenever its socket is readable (a `poll` and
/// a `recvfrom` each), which cost about 70 µs of CPU a request against h2load's 20, and
/// cannot reuse an h2c connection.
///
/// Requests to one origin share up to `maxConnectionsPerHost` connections: a new one is
/// opened when every open one carries its stream limit. A request that never left (its
/// connection was lost or went away first, or the server refused its stream) moves to
/// another connection, at most `maxMoves` times; one that left and got no answer fails.
/// Each request's timeout covers its whole life, the connection included. A server that
/// does not choose HTTP/2 in ALPN fails the request with `H2Declined`, so the caller can
/// send it another way.
final class H2Loop: @unchecked Sendable {
    // Safety: `pool`, `byDescriptor`, `registrations`, `live` and `tombstones` belong to the
    // loop thread; other threads reach it only through `queue` (locked) and the wake-up
    // descriptor.
    private let configuration: HTTPClient.Configuration
    private let epoll: Int32
    private let wakeup: Int32
    private let tls: Mutex<TLSContext>
    private let queue = Mutex(Queue())
    private var pool: [String: [H2Connection]] = [:]
    private var byDescriptor: [Int32: H2Connection] = [:]
    /// Each connection's socket as it is in the epoll set.
    private var registrations: [ObjectIdentifier: (fd: Int32, generation: Int, interest: UInt32)] = [:]
    private var live: [Int: H2Exchange] = [:]
    /// Cancellations of requests not seen yet (the caller was cancelled between taking its id
    /// and queuing its request, and the loop read the cancellation first), with when they
    /// came; kept 10 s, far longer than that gap, and dropped if the request already ended.
    private var tombstones: [Int: UInt64] = [:]
    private var nextTimeoutCheck: UInt64 = 0
    private let opened = Atomic<Int>(0)
    private let peak = Atomic<Int>(0)
    private let finished = Atomic<Bool>(false)

    private struct Queue {
        var starting: [H2Exchange] = []
        var cancelling: [Int] = []
        var resolved: [(H2Connection, Result<[[UInt8]], HTTPClientError>)] = []
        var nextID = 0
        var stopping = false
    }

    /// Moves to another connection a request may make before it fails.
    static let maxMoves = 3

    /// - Throws: `HTTPClientError` when the CA file cannot be read or the loop cannot start.
    init(configuration: HTTPClient.Configuration) throws {
        self.configuration = configuration
        tls = Mutex(try TLSContext(extraCAFile: configuration.extraCAFile))
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeup = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard epoll >= 0, wakeup >= 0, herald_epoll_set(epoll, EPOLL_CTL_ADD, wakeup, EPOLLIN.rawValue) == 0 else {
            throw HTTPClientError(kind: .transfer, message: "the HTTP/2 loop could not start: \(String(cString: strerror(errno)))")
        }
        let thread = Thread { [self] in
            try? "herald.http2".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            // OpenSSL writes to the socket with write(2): to a connection the server reset,
            // that raises SIGPIPE, which ends the process. Blocked on this thread, the write
            // fails with EPIPE instead and only the connection ends.
            var pipe = sigset_t()
            sigemptyset(&pipe)
            sigaddset(&pipe, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipe, nil)
            self.run()
        }
        thread.name = "herald.http2"
        thread.start()
    }

    deinit {
        Glibc.close(epoll)
        Glibc.close(wakeup)
    }

    var connectionsOpened: Int { opened.load(ordering: .relaxed) }
    var peakTransfers: Int { peak.load(ordering: .relaxed) }

    func perform(_ request: HTTPRequest, to target: RequestTarget) async throws -> HTTPResponse {
        let id = queue.withLock { queue -> Int in
            queue.nextID += 1
            return queue.nextID
        }
        let deadline = Self.now() + UInt64(Self.nanoseconds(request.timeout))
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let exchange = H2Exchange(id: id, request: request, target: target, deadline: deadline, continuation: continuation)
                let accepted = queue.withLock { queue -> Bool in
                    guard !queue.stopping else { return false }
                    queue.starting.append(exchange)
                    return true
                }
                if accepted {
                    wake()
                } else {
                    exchange.finish(.failure(HTTPClientError(kind: .shutdown, message: "the HTTP client is shut down")))
                }
            }
        } onCancel: {
            queue.withLock { $0.cancelling.append(id) }
            wake()
        }
    }

    /// Fails what is in flight and ends the thread; returns once it is done (at most two seconds).
    func stop() {
        queue.withLock { $0.stopping = true }
        wake()
        for _ in 0..<2_000 where !finished.load(ordering: .acquiring) { usleep(1_000) }
    }

    /// Reads the extra CA file again if it changed: connections opened from now on trust
    /// what it holds now. - Returns: whether it changed.
    func reloadCAFile() throws -> Bool {
        let current = tls.withLock { $0 }
        guard current.changed else { return false }
        let fresh = try TLSContext(extraCAFile: current.extraCAFile)
        tls.withLock { $0 = fresh }
        return true
    }

    private func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeup, &one, 8)
    }

    // MARK: The loop thread

    private func run() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        defer {
            buffer.deallocate()
            finished.store(true, ordering: .releasing)
        }
        while true {
            let (starting, cancelling, resolved, stopping) = queue.withLock { queue in
                defer {
                    queue.starting.removeAll()
                    queue.cancelling.removeAll()
                    queue.resolved.removeAll()
                }
                return (queue.starting, queue.cancelling, queue.resolved, queue.stopping)
            }
            if stopping {
                shutDown(starting)
                return
            }
            var touched: [ObjectIdentifier: H2Connection] = [:]
            for (connection, result) in resolved {
                connection.resolved(result)
                touched[ObjectIdentifier(connection)] = connection
            }
            let now = Self.now()
            for exchange in starting {
                if tombstones.removeValue(forKey: exchange.id) != nil {
                    exchange.finish(.failure(CancellationError()))
                    continue
                }
                live[exchange.id] = exchange
                if let connection = assign(exchange) { touched[ObjectIdentifier(connection)] = connection }
            }
            if live.count > peak.load(ordering: .relaxed) { peak.store(live.count, ordering: .relaxed) }
            for id in cancelling {
                guard let exchange = live[id] else {
                    tombstones[id] = now
                    continue
                }
                if let connection = end(exchange, .failure(CancellationError())) { touched[ObjectIdentifier(connection)] = connection }
            }
            if now >= nextTimeoutCheck {
                for connection in expire(now: now) { touched[ObjectIdentifier(connection)] = connection }
                if !tombstones.isEmpty { tombstones = tombstones.filter { now - $0.value < 10_000_000_000 } }
                nextTimeoutCheck = now + Self.timeoutCheckInterval
            }
            for connection in touched.values {
                connection.flush()
                settle(connection)
            }

            let timeout = live.isEmpty ? 1_000 : Int32(Self.timeoutCheckInterval / 1_000_000)
            let count = epoll_wait(epoll, &events, Int32(events.count), timeout)
            for index in 0..<max(0, Int(count)) {
                let fd = withUnsafePointer(to: &events[index]) { herald_epoll_event_fd($0) }
                if fd == wakeup {
                    var value: UInt64 = 0
                    _ = Glibc.read(wakeup, &value, 8)
                    continue
                }
                guard let connection = byDescriptor[fd] else { continue }
                connection.handle(events: events[index].events, buffer: buffer)
                settle(connection)
            }
        }
    }

    /// Puts `exchange` on a connection to its origin. - Returns: that connection.
    private func assign(_ exchange: H2Exchange) -> H2Connection? {
        let origin = exchange.target.origin
        var connections = pool[origin, default: []].filter(\.acceptsRequests)
        let least = connections.min(by: { $0.load < $1.load })
        let connection: H2Connection
        if let least, least.load < least.streamLimit || connections.count >= max(1, configuration.maxConnectionsPerHost) {
            connection = least
        } else {
            connection = H2Connection(
                target: exchange.target, tls: exchange.target.secure ? tls.withLock { $0 } : nil,
                maxStreams: max(1, configuration.maxStreamsPerConnection),
                connectDeadline: Self.now() + UInt64(Self.nanoseconds(configuration.connectTimeout)))
            connections.append(connection)
            opened.add(1, ordering: .relaxed)
            resolve(connection)
        }
        pool[origin] = connections
        connection.submit(exchange)
        return connection
    }

    /// Resolves the connection's host on a thread of its own (getaddrinfo blocks), then
    /// hands the addresses to the loop.
    private func resolve(_ connection: H2Connection) {
        let target = connection.target
        Thread.detachNewThread { [self] in
            let result = Self.addresses(of: target)
            queue.withLock { $0.resolved.append((connection, result)) }
            wake()
        }
    }

    private static func addresses(of target: RequestTarget) -> Result<[[UInt8]], HTTPClientError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(target.host, String(target.port), &hints, &list)
        guard status == 0 else {
            let reason = String(cString: gai_strerror(status))
            return .failure(HTTPClientError(kind: .connect, message: "cannot resolve \(target.host): \(reason)"))
        }
        defer { freeaddrinfo(list) }
        var addresses: [[UInt8]] = []
        var entry = list
        while let current = entry {
            if let address = current.pointee.ai_addr {
                addresses.append(Array(UnsafeRawBufferPointer(start: address, count: Int(current.pointee.ai_addrlen))))
            }
            entry = current.pointee.ai_next
        }
        return .success(addresses)
    }

    /// Finishes `exchange` early (cancelled, timed out). - Returns: its connection, to flush.
    private func end(_ exchange: H2Exchange, _ result: Result<HTTPResponse, any Error>) -> H2Connection? {
        let connection = exchange.connection
        connection?.withdraw(exchange)
        live[exchange.id] = nil
        exchange.finish(result)
        return connection
    }

    /// Fails requests past their timeout, connections past their connect timeout, and
    /// connections that answered nothing to a PING sent when one of their requests timed out
    /// or a request body waited `stallProbeDelay` for the server's window (a server or network
    /// that went silent without closing the connection).
    private func expire(now: UInt64) -> [H2Connection] {
        var touched: [H2Connection] = []
        for exchange in live.values where exchange.deadline <= now {
            let timeout = Double(Self.nanoseconds(exchange.request.timeout)) / 1e9
            let error = HTTPClientError(kind: .timeout, message: "no answer from \(exchange.target.authority) within \(timeout) s")
            exchange.connection?.probe(now: now)
            if let connection = end(exchange, .failure(error)) { touched.append(connection) }
        }
        for connection in byDescriptor.values where connection.probeIfStalled(now: now, after: Self.stallProbeDelay) {
            touched.append(connection)
        }
        for connection in byDescriptor.values where connection.state == .open {
            guard let sent = connection.probeSent, now - sent > Self.probeTimeout else { continue }
            let seconds = Self.probeTimeout / 1_000_000_000
            connection.fail(
                HTTPClientError(
                    kind: .timeout, message: "\(connection.target.authority) sent nothing for \(seconds) s after a PING; the connection was dropped"))
            touched.append(connection)
        }
        for connections in pool.values {
            for connection in connections where connection.state != .open && connection.state != .closed && connection.connectDeadline <= now {
                connection.fail(HTTPClientError(kind: .timeout, message: "connecting to \(connection.target.authority) timed out"))
                touched.append(connection)
            }
        }
        return touched
    }

    /// How long request data may wait for the server's flow-control window, nothing arriving,
    /// before a PING asks the server to answer (`H2Connection.probeIfStalled`).
    static let stallProbeDelay: UInt64 = 1_000_000_000

    /// How long a connection may stay silent after a PING before it is taken for dead.
    static let probeTimeout: UInt64 = 10_000_000_000

    /// After a connection acted: watch its socket for what it waits for, send on what it
    /// could not send, forget what finished, and drop it once closed.
    private func settle(_ connection: H2Connection) {
        let moved = connection.moved
        connection.moved.removeAll()
        for id in connection.finishedIDs { live[id] = nil }
        connection.finishedIDs.removeAll()
        let key = ObjectIdentifier(connection)
        if let old = registrations[key], old.generation != connection.socketGeneration || connection.state == .closed {
            // Its socket was closed (which took it out of the epoll set).
            if byDescriptor[old.fd] === connection { byDescriptor[old.fd] = nil }
            registrations[key] = nil
        }
        if connection.state == .closed {
            forget(connection)
        } else if connection.fd >= 0, registrations[key]?.interest != connection.interest {
            var operation = registrations[key] == nil ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
            if herald_epoll_set(epoll, operation, connection.fd, connection.interest) != 0, errno == EEXIST {
                operation = EPOLL_CTL_MOD
                _ = herald_epoll_set(epoll, operation, connection.fd, connection.interest)
            }
            registrations[key] = (connection.fd, connection.socketGeneration, connection.interest)
            byDescriptor[connection.fd] = connection
        }
        var again: [ObjectIdentifier: H2Connection] = [:]
        for exchange in moved {
            exchange.moves += 1
            if connection.declinedHTTP2 {
                live[exchange.id] = nil
                exchange.finish(.failure(H2Declined()))
            } else if exchange.moves > Self.maxMoves {
                live[exchange.id] = nil
                exchange.finish(
                    .failure(
                        HTTPClientError(
                            kind: .transfer, message: "\(exchange.target.authority) did not take the request on \(Self.maxMoves + 1) connections")))
            } else if let next = assign(exchange) {
                again[ObjectIdentifier(next)] = next
            }
        }
        for next in again.values where next !== connection {
            next.flush()
            settle(next)
        }
    }

    private func forget(_ connection: H2Connection) {
        let origin = connection.target.origin
        pool[origin] = pool[origin]?.filter { $0 !== connection }
        if pool[origin]?.isEmpty == true { pool[origin] = nil }
    }

    private func shutDown(_ starting: [H2Exchange]) {
        let error = HTTPClientError(kind: .shutdown, message: "the HTTP client is shut down")
        for exchange in starting { exchange.finish(.failure(error)) }
        for exchange in live.values { exchange.finish(.failure(error)) }
        live.removeAll()
        for connections in pool.values {
            for connection in connections { connection.fail(error) }
        }
        pool.removeAll()
        byDescriptor.removeAll()
        registrations.removeAll()
    }

    /// How often timeouts are looked for: the most a request outlives its timeout.
    private static let timeoutCheckInterval: UInt64 = 50_000_000

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(1, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// The server chose no HTTP/2 in ALPN: the request never left and may go another way.
struct H2Declined: Error {}
