import CCurl
import Foundation
import Logging
import Synchronization

/// The multi handle and its thread.
final class CurlLoop: @unchecked Sendable {
    // Safety: `multi` is used only on the loop thread, except `curl_multi_wakeup`, which
    // libcurl allows from any thread. `active` and `tombstones` are loop-thread only; the
    // hand-over queue is behind `queue`.
    private let multi: UnsafeMutableRawPointer
    private let configuration: HTTPClient.Configuration
    private let logger: Logger
    /// The CAs new connections trust; older bundles are removed at the end.
    private let ca: Mutex<(current: CABundle?, retired: [CABundle])>
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]
    private var tombstones: Set<Int> = []
    /// Finished easy handles, reset and kept for the next requests (creating one per request
    /// costs an allocation storm); at most `maxInFlight` are kept.
    private var spare: [UnsafeMutableRawPointer] = []
    private let queue = Mutex(Queue())
    private let opened = Atomic<Int>(0)
    private let peak = Atomic<Int>(0)
    private let finished = Atomic<Bool>(false)

    private struct Queue {
        var starting: [Transfer] = []
        var cancelling: Set<Int> = []
        var nextID = 0
        var stopping = false
    }

    private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// - Parameter keepIdleConnections: keep up to twice the per-host connections open while idle.
    init(configuration: HTTPClient.Configuration, keepIdleConnections: Bool = false, logger: Logger) throws {
        guard Self.globalInit == CURLE_OK, let multi = curl_multi_init() else {
            throw HTTPClientError(kind: .transfer, message: "libcurl could not be initialised")
        }
        self.multi = multi
        self.configuration = configuration
        self.logger = logger
        self.ca = Mutex((current: try configuration.extraCAFile.map { try CABundle(extra: $0) }, retired: [CABundle]()))
        _ = herald_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        _ = herald_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(1, configuration.maxConnectionsPerHost))
        if keepIdleConnections {
            // HTTP/1.1 keep-alive: libcurl's default cache (four per transfer running) closes
            // idle connections whenever few transfers run, and opens them again later.
            _ = herald_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, 2 * max(1, configuration.maxConnectionsPerHost))
        }
        _ = herald_multi_setopt_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, configuration.maxStreamsPerConnection)
        let thread = Thread { [self] in
            // Named where the kernel sees it too (Foundation keeps `thread.name` to itself).
            try? "herald.http".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            self.run()
        }
        thread.name = "herald.http"
        thread.start()
    }

    var connectionsOpened: Int { opened.load(ordering: .relaxed) }
    var peakTransfers: Int { peak.load(ordering: .relaxed) }

    func perform(_ request: HTTPRequest, over wire: WireProtocol) async throws -> HTTPResponse {
        let id = queue.withLock { queue -> Int in
            queue.nextID += 1
            return queue.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let transfer = Transfer(id: id, request: request, wire: wire, continuation: continuation)
                let accepted = queue.withLock { queue -> Bool in
                    guard !queue.stopping else { return false }
                    queue.starting.append(transfer)
                    return true
                }
                if accepted {
                    curl_multi_wakeup(multi)
                } else {
                    transfer.finish(.failure(HTTPClientError(kind: .shutdown, message: "the HTTP client is shut down")))
                }
            }
        } onCancel: {
            queue.withLock { _ = $0.cancelling.insert(id) }
            curl_multi_wakeup(multi)
        }
    }

    /// Fails what is in flight and ends the thread; returns once the thread is done (at most
    /// two seconds), so that a process may exit right after without pulling libcurl's and
    /// OpenSSL's state from under a thread still cleaning up.
    ///
    /// The combined CA files are removed here once the thread is done: the loop thread keeps
    /// this object alive, and a process usually exits right after, so `deinit` alone would
    /// leave one file per client in the temporary directory.
    func stop() {
        queue.withLock { $0.stopping = true }
        curl_multi_wakeup(multi)
        for _ in 0..<2_000 where !finished.load(ordering: .acquiring) { usleep(1_000) }
        if finished.load(ordering: .acquiring) { removeCABundles() }
    }

    deinit {
        // Here, not on the loop thread: until the last reference is gone, another thread may
        // still call curl_multi_wakeup (a caller that raced with shutdown, a cancellation).
        curl_multi_cleanup(multi)
        removeCABundles()
    }

    /// The combined CA files this loop wrote (the current one first), while they exist.
    var caBundlePaths: [String] {
        ca.withLock { ca in ([ca.current].compactMap { $0 } + ca.retired).map(\.combinedPath) }
            .filter { FileManager.default.fileExists(atPath: $0) }
    }

    private func removeCABundles() {
        ca.withLock { ca in
            ca.current?.remove()
            for bundle in ca.retired { bundle.remove() }
            ca.retired.removeAll()
        }
    }

    // MARK: The loop thread

    private func run() {
        while true {
            let (starting, cancelling, stopping) = queue.withLock { queue in
                defer {
                    queue.starting.removeAll()
                    queue.cancelling.removeAll()
                }
                return (queue.starting, queue.cancelling, queue.stopping)
            }
            tombstones.formUnion(cancelling)
            for transfer in starting { start(transfer) }
            if !tombstones.isEmpty { cancelTombstoned() }
            if stopping {
                for transfer in active.values {
                    complete(transfer, .failure(HTTPClientError(kind: .shutdown, message: "the HTTP client is shut down")))
                }
                for easy in spare { curl_easy_cleanup(easy) }
                spare.removeAll()
                finished.store(true, ordering: .releasing)
                return
            }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            collectFinished()
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
    }

    private func start(_ transfer: Transfer) {
        if tombstones.remove(transfer.id) != nil {
            transfer.finish(.failure(CancellationError()))
            return
        }
        guard let easy = spare.popLast() ?? curl_easy_init() else {
            transfer.finish(.failure(HTTPClientError(kind: .transfer, message: "libcurl could not create a transfer")))
            return
        }
        transfer.easy = easy
        let request = transfer.request
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        _ = herald_easy_setopt_string(easy, CURLOPT_URL, request.url)
        _ = herald_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        switch transfer.wire {
        case .tls:
            _ = herald_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
            _ = herald_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1)
        case .http1:
            _ = herald_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        case .h2c:
            // A connection of its own, closed after the answer: libcurl 7.88 cannot reuse one.
            _ = herald_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE))
            _ = herald_easy_setopt_long(easy, CURLOPT_FRESH_CONNECT, 1)
            _ = herald_easy_setopt_long(easy, CURLOPT_FORBID_REUSE, 1)
        }
        _ = herald_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, Self.milliseconds(request.timeout))
        _ = herald_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(configuration.connectTimeout))
        if let caFile = ca.withLock({ $0.current?.combinedPath }) { _ = herald_easy_setopt_string(easy, CURLOPT_CAINFO, caFile) }

        switch request.method.uppercased() {
        case "GET": break
        case "POST": _ = herald_easy_setopt_long(easy, CURLOPT_POST, 1)
        default: _ = herald_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, request.method.uppercased())
        }
        if !request.body.isEmpty || request.method.uppercased() == "POST" {
            // libcurl reads the body from this buffer until the transfer ends.
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, request.body.count), alignment: 1)
            buffer.copyBytes(from: request.body)
            transfer.requestBody = buffer
            _ = herald_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
            _ = herald_easy_setopt_pointer(easy, CURLOPT_POSTFIELDS, buffer.baseAddress)
        }
        var list: UnsafeMutablePointer<curl_slist>?
        for header in request.headers { list = curl_slist_append(list, "\(header.name): \(header.value)") }
        list = curl_slist_append(list, "Expect:")  // no 100-continue round trip on HTTP/1.1
        transfer.headerList = list
        _ = herald_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, list)

        _ = herald_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context)
        _ = herald_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            guard let context else { return 0 }
            let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
            let length = size * count
            if let data, length > 0, !transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: length)) {
                return 0  // enough of the body: stop (collectFinished reads this as the answer)
            }
            return length
        }
        if request.connectGuard != nil { guardConnections(of: transfer, easy: easy, context: context) }
        _ = herald_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, context)
        _ = herald_easy_setopt_data_callback(easy, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            guard let context else { return 0 }
            let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
            let length = size * count
            if let data, length > 0 {
                transfer.receiveHeader(UnsafeRawBufferPointer(start: data, count: length))
            }
            return length
        }
        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else {
            transfer.release()
            transfer.finish(.failure(HTTPClientError(kind: .transfer, message: String(cString: curl_multi_strerror(added)))))
            return
        }
        active[easy] = transfer
        if active.count > peak.load(ordering: .relaxed) { peak.store(active.count, ordering: .relaxed) }
    }

    /// A request to a URL that others choose: every address is checked before libcurl
    /// connects to it, no proxy stands between (the check would see the proxy's address), and
    /// no redirect is followed (libcurl's default, set here so that it stays so).
    private func guardConnections(of transfer: Transfer, easy: UnsafeMutableRawPointer, context: UnsafeMutableRawPointer) {
        let openGuard = UnsafeMutablePointer<herald_open_guard>.allocate(capacity: 1)
        openGuard.initialize(
            to: herald_open_guard(
                check: { context, address in
                    guard let context, let address else { return 1 }
                    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
                    return transfer.mayConnect(to: String(cString: address)) ? 0 : 1
                }, context: context))
        transfer.openGuard = openGuard
        _ = herald_easy_guard_connections(easy, openGuard)
        _ = herald_easy_setopt_string(easy, CURLOPT_NOPROXY, "*")
        _ = herald_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0)
        _ = herald_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
    }

    private func cancelTombstoned() {
        for (easy, transfer) in active where tombstones.contains(transfer.id) {
            tombstones.remove(transfer.id)
            curl_multi_remove_handle(multi, easy)
            active[easy] = nil
            recycle(transfer.detachHandle())
            transfer.release()
            transfer.finish(.failure(CancellationError()))
        }
    }

    private func collectFinished() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle, let transfer = active[easy] else {
                continue
            }
            let code = message.pointee.data.result
            // A body stopped at its limit is an answer, not a failure.
            let answered = code == CURLE_OK || (code == CURLE_WRITE_ERROR && transfer.truncated)
            if let refusal = transfer.refusal, !answered {
                complete(transfer, .failure(HTTPClientError(kind: .refused, message: refusal, curlCode: Int(code.rawValue))))
                continue
            }
            complete(transfer, answered ? .success(response(transfer)) : .failure(error(code, easy)))
        }
    }

    private func complete(_ transfer: Transfer, _ result: Result<HTTPResponse, any Error>) {
        if let easy = transfer.easy {
            var connects = 0
            _ = herald_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects)
            opened.add(connects, ordering: .relaxed)
            curl_multi_remove_handle(multi, easy)
            active[easy] = nil
            recycle(transfer.detachHandle())
        }
        tombstones.remove(transfer.id)
        transfer.release()
        transfer.finish(result)
    }

    /// Keeps a finished handle for reuse, its options cleared (connections live in the multi
    /// handle, not here).
    private func recycle(_ easy: UnsafeMutableRawPointer?) {
        guard let easy else { return }
        if spare.count < configuration.maxInFlight {
            curl_easy_reset(easy)
            spare.append(easy)
        } else {
            curl_easy_cleanup(easy)
        }
    }

    private func response(_ transfer: Transfer) -> HTTPResponse {
        HTTPResponse(status: transfer.status, headers: transfer.headers, body: transfer.body, httpVersion: transfer.httpVersion)
    }

    private func error(_ code: CURLcode, _ easy: UnsafeMutableRawPointer) -> HTTPClientError {
        let message = String(cString: curl_easy_strerror(code))
        let kind: HTTPClientError.Kind
        switch code {
        case CURLE_OPERATION_TIMEDOUT: kind = .timeout
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL: kind = .badURL
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_PROXY: kind = .connect
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS:
            kind = .tls
        default: kind = .transfer
        }
        // The bytes of request head written: none means the server never saw it.
        var requestBytes = 0
        _ = herald_easy_getinfo_long(easy, CURLINFO_REQUEST_SIZE, &requestBytes)
        return HTTPClientError(kind: kind, message: message, curlCode: Int(code.rawValue), requestSent: requestBytes > 0)
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }

    /// Combines the extra CA file again if it changed since it was read; new connections
    /// trust what it holds now.
    /// - Returns: whether it changed.
    /// - Throws: `HTTPClientError` when the changed file cannot be read (the old CAs stay).
    func reloadCAFile() throws -> Bool {
        guard let current = ca.withLock({ $0.current }), current.changed else { return false }
        let fresh = try CABundle(extra: current.extraPath)
        ca.withLock { ca in
            ca.retired.append(current)
            ca.current = fresh
        }
        return true
    }
}
