/// Where an HTTP/2 request goes: over TLS (`https://`) or not (h2c, `http://`), the host and
/// port to connect to, the `:authority` and `:path` it is sent with. Parsed as bytes of the URL as written (no percent-decoding: the
/// path goes on the wire as the caller wrote it).
struct RequestTarget: Sendable, Hashable {
    /// `https://`: over TLS.
    let secure: Bool
    /// The host to resolve or the address to connect to, without brackets.
    let host: String
    let port: Int
    /// `host` or `host:port` as written in the URL (brackets kept), for `:authority`.
    let authority: String
    /// The path and query, `/` when the URL has none; never the fragment.
    let path: String

    /// `nil` for anything but an `https://` or `http://` URL with a host and a valid port, or with
    /// credentials (`user@host`), which this client does not send. Scans the URL's bytes
    /// once: it runs for every request.
    init?(url: String) {
        let bytes = url.utf8
        var cursor = bytes.startIndex
        func skip(_ literal: String) -> Bool {
            for expected in literal.utf8 {
                guard cursor < bytes.endIndex else { return false }
                let byte = bytes[cursor]
                guard (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 == expected : byte == expected else { return false }
                cursor = bytes.index(after: cursor)
            }
            return true
        }
        guard skip("http") else { return nil }
        let secure = skip("s")
        guard skip("://") else { return nil }
        let authorityStart = cursor
        var authorityEnd = bytes.endIndex
        var at = false
        while cursor < bytes.endIndex {
            let byte = bytes[cursor]
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") {
                authorityEnd = cursor
                break
            }
            if byte == UInt8(ascii: "@") { at = true }
            cursor = bytes.index(after: cursor)
        }
        guard authorityStart < authorityEnd, !at else { return nil }
        let authority = url[authorityStart..<authorityEnd]
        let pathEnd = bytes[authorityEnd...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        let rawPath = url[authorityEnd..<pathEnd]
        let path = rawPath.isEmpty ? "/" : (rawPath.utf8.first == UInt8(ascii: "?") ? "/" + rawPath : String(rawPath))

        var host: Substring
        var portText: Substring?
        if authority.utf8.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.utf8.first == UInt8(ascii: ":") else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = authority.utf8.lastIndex(of: UInt8(ascii: ":")) {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        var port = secure ? 443 : 80
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else { return nil }
            port = value
        }
        guard !host.isEmpty else { return nil }
        self.secure = secure
        self.host = host.lowercased()
        self.port = port
        self.authority = String(authority)
        self.path = path
    }

    /// What connections are shared by: requests to one host and port share them.
    var origin: String { "\(secure ? "https" : "http")://\(host):\(port)" }
}
