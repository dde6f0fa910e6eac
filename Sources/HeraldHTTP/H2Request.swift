import CHTTP2

/// Turns a request into an HTTP/2 stream: the pseudo-headers, the caller's headers
/// (lowercased, connection-specific ones left out) and the body.
enum H2Request {
    /// Headers HTTP/2 forbids (RFC 9113 §8.2.2) or sets itself.
    private static let dropped: Set<String> = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host", "expect", "te"]

    /// The header list, pseudo-headers first, as the name and value pairs that go on the wire.
    static func fields(of request: HTTPRequest, target: RequestTarget) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = [
            (":method", request.method.uppercased()), (":scheme", target.secure ? "https" : "http"), (":authority", target.authority),
            (":path", target.path)
        ]
        var hasLength = false
        for header in request.headers {
            let name = header.name.lowercased()
            if dropped.contains(name) || name.hasPrefix(":") { continue }
            if name == "content-length" { hasLength = true }
            fields.append((name, header.value))
        }
        if !hasLength, !request.body.isEmpty || request.method.uppercased() == "POST" {
            fields.append(("content-length", String(request.body.count)))
        }
        return fields
    }

    /// Submits `exchange` on `session`. - Returns: the stream id, or nghttp2's negative error.
    static func submit(_ exchange: H2Exchange, on session: OpaquePointer) -> Int32 {
        let fields = fields(of: exchange.request, target: exchange.target)
        var storage: [UInt8] = []
        var spans: [(name: Range<Int>, value: Range<Int>)] = []
        spans.reserveCapacity(fields.count)
        for field in fields {
            let nameStart = storage.count
            storage.append(contentsOf: field.name.utf8)
            let valueStart = storage.count
            storage.append(contentsOf: field.value.utf8)
            spans.append((nameStart..<valueStart, valueStart..<storage.count))
        }
        storage.append(0)  // never empty, so the base address exists
        return storage.withUnsafeMutableBufferPointer { bytes -> Int32 in
            let base = bytes.baseAddress!
            var list = spans.map { span in
                nghttp2_nv(
                    name: base + span.name.lowerBound, value: base + span.value.lowerBound, namelen: span.name.count,
                    valuelen: span.value.count, flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
            }
            // nghttp2 copies the list and the bytes before it returns.
            if exchange.request.body.isEmpty {
                return nghttp2_submit_request(session, nil, &list, list.count, nil, nil)
            }
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: H2Callbacks.readBody)
            return nghttp2_submit_request(session, nil, &list, list.count, &provider, nil)
        }
    }
}
