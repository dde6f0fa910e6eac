import Foundation

/// HTTP/1.1 written by hand over a plain socket, for requests a client library would not
/// send (upgrade headers on a POST) and answers it would not keep (a 101 with the connection
/// held open). Blocking calls, on a thread of their own.
public final class RawHTTP: @unchecked Sendable {
    // (Used from one task at a time: each call waits for its thread before the next.)
    private let socket: Int32
    private var buffered: [UInt8] = []

    public struct Answer: Sendable {
        public let status: Int
        /// Lower-case names.
        public let headers: [String: String]
        public let body: [UInt8]

        public var json: [String: Any] {
            ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:]
        }
    }

    /// Connects to `base` (`http://127.0.0.1:PORT`).
    public init(base: String) throws {
        guard let url = URL(string: base), let host = url.host, let port = url.port else { throw RawHTTPError("bad base \(base)") }
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw RawHTTPError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            throw RawHTTPError("connect: errno \(errno)")
        }
    }

    deinit {
        close(socket)
    }

    /// A request with `Connection: Upgrade`, `Upgrade: websocket`, `Sec-WebSocket-Version: 13`
    /// and a key, besides `headers` and a JSON `body` (with its length).
    public static func upgradeRequest(_ method: String, _ path: String, headers: [String] = [], body: String? = nil) -> String {
        var lines = [
            "\(method) \(path) HTTP/1.1", "Host: 127.0.0.1", "Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="
        ]
        lines += headers
        if let body { lines += ["Content-Type: application/json", "Content-Length: \(body.utf8.count)"] }
        return lines.joined(separator: "\r\n") + "\r\n\r\n" + (body ?? "")
    }

    /// Sends `request` and reads the answer's head and (by its `Content-Length`) its body; a 101
    /// leaves the connection open, its bytes unread.
    public func exchange(_ request: String) async throws -> Answer {
        try await onThread {
            try self.write(Array(request.utf8))
            return try self.readAnswer()
        }
    }

    private func onThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Swift.Result { try body() }) }
        }
    }

    private func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw RawHTTPError("send: errno \(errno)") }
            sent += count
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 4_096)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw RawHTTPError(count == 0 ? "closed by the server" : "recv: errno \(errno)") }
        buffered += chunk[..<count]
    }

    private func readAnswer() throws -> Answer {
        let separator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while end == nil {
            end = buffered.indices.dropLast(3).first { Array(buffered[$0..<$0 + 4]) == separator }
            if end == nil { try fill() }
        }
        guard let end else { throw RawHTTPError("no head") }
        let head = String(decoding: buffered[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        buffered.removeFirst(end + 4)
        let statusLine = head.first?.split(separator: " ") ?? []
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw RawHTTPError("bad status line \(head.first ?? "")") }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        guard status != 101 else { return Answer(status: status, headers: headers, body: []) }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while buffered.count < length { try fill() }
        let body = Array(buffered[..<length])
        buffered.removeFirst(length)
        return Answer(status: status, headers: headers, body: body)
    }
}

public struct RawHTTPError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
