import Foundation

/// Where Herald may send to a URL that someone else chose: a tenant's webhook (docs/webhooks.md)
/// or a browser's Web Push subscription (docs/apps.md#web-push-browsers-and-installed-web-apps). `https://` only, and never to
/// the machine itself, a private network, a link-local address or a cloud's metadata service,
/// unless the operator allows them (`HERALD_WEBHOOK_ALLOW_HTTP=1`, `HERALD_WEBHOOK_ALLOW_PRIVATE=1`;
/// `HERALD_WEBPUSH_ALLOW_HTTP`, `HERALD_WEBPUSH_ALLOW_PRIVATE` for Web Push), for tests and
/// internal networks. A URL is checked when it is registered; the address its host resolves to
/// is checked again each time a connection is made (`refusal(connectingTo:)`, `connectGuard`),
/// so a name that later points inside is refused then.
public struct DestinationPolicy: Sendable, Equatable {
    /// Whose URLs these are: it names the variables and the errors.
    public enum Purpose: String, Sendable, Equatable {
        case webhooks = "WEBHOOK"
        case webPush = "WEBPUSH"

        /// "a webhook URL", "a Web Push endpoint".
        var noun: String { self == .webhooks ? "a webhook URL" : "a Web Push endpoint" }
        /// Who never connects where it must not.
        var sender: String { self == .webhooks ? "a webhook" : "Web Push" }
        /// `HERALD_WEBHOOK_ALLOW_HTTP`, `HERALD_WEBPUSH_ALLOW_PRIVATE`, …
        func variable(_ what: String) -> String { "HERALD_\(rawValue)_ALLOW_\(what)" }
    }

    public var purpose: Purpose
    public var allowHTTP: Bool
    public var allowPrivate: Bool

    public static let maxURLLength = 2048

    public init(_ purpose: Purpose, allowHTTP: Bool = false, allowPrivate: Bool = false) {
        self.purpose = purpose
        self.allowHTTP = allowHTTP
        self.allowPrivate = allowPrivate
    }

    /// From `HERALD_WEBHOOK_ALLOW_HTTP` and `HERALD_WEBHOOK_ALLOW_PRIVATE` (or the `WEBPUSH`
    /// ones) (`1` or `true`; `0`, `false` or unset: not allowed).
    /// - Throws: `InputError` for any other value.
    public init(_ purpose: Purpose, environment: [String: String]) throws {
        func flag(_ name: String) throws -> Bool {
            switch environment[name]?.lowercased() {
            case nil, "", "0", "false": return false
            case "1", "true": return true
            case let value?: throw InputError("\(name)=\(Input.printable(value)) is neither 1 nor 0")
            }
        }
        self.init(purpose, allowHTTP: try flag(purpose.variable("HTTP")), allowPrivate: try flag(purpose.variable("PRIVATE")))
    }

    /// What a guarded request asks before each connection (`HTTPRequest.connectGuard`): the
    /// numeric address it is about to connect to, refused as `refusal(connectingTo:)` says.
    public var connectGuard: @Sendable (String) -> String? {
        { [self] address in
            guard let parsed = IPAddress(address) else { return "\(address) is not an address \(purpose.sender) connects to" }
            return refusal(connectingTo: parsed)
        }
    }

    /// A URL as it is given, stored as given: a URL as RFC 3986 writes it
    /// (ASCII, every other character percent-encoded, every `%` followed by two hex digits),
    /// absolute, `https` (or `http` when allowed), a host that can be connected to, a port from
    /// 1 to 65535 if any, no user name or password (they would be shown and logged with it), no
    /// fragment, at most 2,048 characters. The host is a name (labels of letters, digits, `-`
    /// and `_`, none empty, at most 63 characters each and 253 in all) or an address: one in
    /// brackets is IPv6 (not IPvFuture, nor with a zone, `%25lo`), and a host whose last label
    /// is a number is IPv4 and must read as one (`4294967297` does not); an address, in any
    /// notation a connection would read it in (`127.1`, `0x7f000001`,
    /// `[::ffff:127.0.0.1]`…), is checked as a connection to it would be.
    /// - Throws: `InputError` that says what is wrong.
    public func url(_ text: String) throws -> URL {
        guard text.utf8.count <= Self.maxURLLength else { throw InputError("\(purpose.noun) is at most \(Self.maxURLLength) characters") }
        if let refusal = URISyntax.refusal(text) { throw InputError("\"\(Input.printable(text))\" is not a URL: \(refusal)") }
        guard let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased(), let url = parts.url else {
            throw InputError("\"\(Input.printable(text))\" is not a URL")
        }
        guard scheme == "https" || (scheme == "http" && allowHTTP) else {
            throw InputError(
                scheme == "http"
                    ? "\(purpose.noun) must be https:// (the operator may allow http:// with \(purpose.variable("HTTP"))=1)"
                    : "\(purpose.noun) must be https://")
        }
        guard let host = parts.percentEncodedHost, !host.isEmpty else { throw InputError("\(purpose.noun) names a host") }
        guard !host.contains("%") else { throw InputError("\(purpose.noun)'s host is a name or an address, without % (nor an IPv6 zone)") }
        guard parts.user == nil, parts.password == nil else { throw InputError("\(purpose.noun) carries no user name or password") }
        guard parts.fragment == nil else { throw InputError("\(purpose.noun) has no #fragment") }
        // A port too large for an integer is no port at all to `port`: read from the text.
        if let range = parts.rangeOfPort, !text[range].isEmpty {
            guard let port = Int(text[range]), (1...65_535).contains(port) else { throw InputError("\(purpose.noun)'s port is from 1 to 65535") }
        }
        let address = IPAddress(urlHost: host)
        if address == nil, let problem = Self.hostProblem(host) { throw InputError("\(purpose.noun)'s host \(problem)") }
        if let address, let refusal = refusal(connectingTo: address) { throw InputError(refusal) }
        return url
    }

    /// Why `host`, which is no address, cannot be connected to; nil for a name that can be.
    static func hostProblem(_ host: String) -> String? {
        if host.hasPrefix("[") { return "is in brackets but not an IPv6 address" }
        var name = Substring(host)
        if name.hasSuffix(".") { name = name.dropLast() }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard name.utf8.count <= 253, labels.allSatisfy({ (1...63).contains($0.utf8.count) }) else {
            return "is not a name: its labels are 1 to 63 characters, 253 in all, none empty"
        }
        guard name.utf8.allSatisfy({ Self.nameBytes[Int($0)] }) else { return "is not a name: letters, digits, - and _ only" }
        if let last = labels.last, Self.isNumber(last) {
            return "ends in a number, so it is an IPv4 address, and it is not one"
        }
        return nil
    }

    /// A label a URL reads as a number (the WHATWG URL standard's "ends in a number"): decimal
    /// digits, or `0x` and hexadecimal ones.
    static func isNumber(_ label: Substring) -> Bool {
        let lower = label.lowercased()
        if lower.hasPrefix("0x") { return lower.dropFirst(2).allSatisfy(\.isHexDigit) }
        return !lower.isEmpty && lower.allSatisfy { ("0"..."9").contains($0) }
    }

    /// The bytes a host name is written with (its labels, and the dots between them).
    private static let nameBytes: [Bool] = (0..<256).map { byte in
        let scalar = Unicode.Scalar(UInt8(byte))
        return ("0"..."9").contains(scalar) || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || "-_.".unicodeScalars.contains(scalar)
    }

    /// Why a connection to `address` is refused; nil when it is allowed.
    public func refusal(connectingTo address: IPAddress) -> String? {
        let range = address.range
        switch range {
        case .public: return nil
        case .metadata, .reserved:
            // Never: not even on an internal network does a tenant's webhook reach these.
            return "\(address) is a \(range == .metadata ? "cloud metadata" : "reserved") address: \(purpose.sender) never connects to it"
        case .loopback, .private, .linkLocal:
            guard !allowPrivate else { return nil }
            return "\(address) is a \(range.rawValue) address: refused (the operator may allow it with \(purpose.variable("PRIVATE"))=1)"
        }
    }
}
