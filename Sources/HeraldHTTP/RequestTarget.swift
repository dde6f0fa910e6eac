/// Where an `https://` request goes: the host and port to connect to, the `:authority` and
/// `:path` it is sent with. Parsed as bytes of the URL as written (no percent-decoding: the
/// path goes on the wire as the caller wrote it).
struct RequestTarget: Sendable, Hashable {
    /// The host to resolve or the address to connect to, without brackets.
    let host: String
    let port: Int
    /// `host` or `host:port` as written in the URL (brackets kept), for `:authority`.
    let authority: String
    /// The path and query, `/` when the URL has none; never the fragment.
    let path: String

    /// `nil` for anything but an `https://` URL with a host and a valid port, or with
    /// credentials (`user@host`), which this client does not send.
    init?(url: String) {
        guard url.count > 8, url.prefix(8).lowercased() == "https://" else { return nil }
        let rest = url.dropFirst(8)
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = String(rest[..<authorityEnd])
        guard !authority.isEmpty, !authority.contains(Character("@")) else { return nil }
        var remainder = rest[authorityEnd...]
        if let fragment = remainder.firstIndex(of: "#") { remainder = remainder[..<fragment] }
        let path = remainder.isEmpty ? "/" : (remainder.first == "?" ? "/" + remainder : String(remainder))

        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = Substring(authority)
        }
        var port = 443
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else { return nil }
            port = value
        }
        guard !host.isEmpty else { return nil }
        self.host = host.lowercased()
        self.port = port
        self.authority = authority
        self.path = path
    }

    /// What connections are shared by: requests to one host and port share them.
    var origin: String { "\(host):\(port)" }
}
