import CCurl

/// One request's state inside the curl loop.
///
/// Safety (`@unchecked Sendable`): the caller creates it and hands it to the loop thread
/// through the locked queue; from then on only the loop thread touches it. When the queue
/// refuses it, the caller alone still holds it.
final class Transfer: @unchecked Sendable {
    let id: Int
    let request: HTTPRequest
    let wire: WireProtocol
    private var continuation: CheckedContinuation<HTTPResponse, any Error>?
    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    var requestBody: UnsafeMutableRawBufferPointer?
    var status = 0
    var httpVersion = ""
    var headers: [String: String] = [:]
    var body: [UInt8] = []
    /// The body reached the request's `maxResponseBytes`: reading stopped there on purpose.
    var truncated = false
    /// Why the request's `connectGuard` refused an address, if it did.
    var refusal: String?
    /// What libcurl's open-socket callback is handed (for a request with a `connectGuard`).
    var openGuard: UnsafeMutablePointer<herald_open_guard>?

    init(id: Int, request: HTTPRequest, wire: WireProtocol, continuation: CheckedContinuation<HTTPResponse, any Error>) {
        self.id = id
        self.request = request
        self.wire = wire
        self.continuation = continuation
    }

    func finish(_ result: Result<HTTPResponse, any Error>) {
        continuation?.resume(with: result)
        continuation = nil
    }

    /// A response header line: a status line starts a new set of headers. Parsed as bytes:
    /// this runs for every header of every response.
    func receiveHeader(_ line: UnsafeRawBufferPointer) {
        var start = line.startIndex
        var end = line.endIndex
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        while start < end, isSpace(line[start]) { start += 1 }
        while end > start, isSpace(line[end - 1]) { end -= 1 }
        guard start < end else { return }
        let bytes = UnsafeRawBufferPointer(rebasing: line[start..<end])
        if bytes.starts(with: "HTTP/".utf8) {
            let parts = bytes.split(separator: 0x20, maxSplits: 2)
            httpVersion = String(decoding: parts[0].dropFirst(5), as: UTF8.self)
            status = parts.count > 1 ? Int(String(decoding: parts[1], as: UTF8.self)) ?? 0 : 0
            headers = [:]
            return
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        var valueStart = colon + 1
        while valueStart < bytes.endIndex, isSpace(bytes[valueStart]) { valueStart += 1 }
        let value = String(decoding: bytes[valueStart...], as: UTF8.self)
        headers[name] = headers[name].map { $0 + ", " + value } ?? value
    }

    /// Appends a piece of the body, up to the request's `maxResponseBytes`.
    /// - Returns: false once the limit is reached (libcurl then stops the transfer).
    func receiveBody(_ data: UnsafeRawBufferPointer) -> Bool {
        guard let limit = request.maxResponseBytes else {
            body.append(contentsOf: data)
            return true
        }
        body.append(contentsOf: data.prefix(max(0, limit - body.count)))
        if body.count >= limit { truncated = true }
        return !truncated
    }

    /// Asks the request's `connectGuard` about an address libcurl is about to connect to.
    /// - Returns: whether the connection may be made.
    func mayConnect(to address: String) -> Bool {
        guard let connectGuard = request.connectGuard else { return true }
        if let reason = connectGuard(address) {
            refusal = reason
            return false
        }
        return true
    }

    /// Hands the easy handle over (for reuse); `release()` then leaves it alone.
    func detachHandle() -> UnsafeMutableRawPointer? {
        defer { easy = nil }
        return easy
    }

    /// Frees what libcurl held for this transfer.
    func release() {
        if let easy { curl_easy_cleanup(easy) }
        easy = nil
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        requestBody?.deallocate()
        requestBody = nil
        openGuard?.deallocate()
        openGuard = nil
    }
}
