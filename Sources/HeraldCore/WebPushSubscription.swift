/// A browser's push subscription as `pushManager.subscribe()` returns it (docs/apps.md#web-push-browsers-and-installed-web-apps):
/// the push service's endpoint for this browser, and the two keys every push to it is
/// encrypted with. Stored as a device of provider `webpush`: the endpoint is its token.
///
/// The checks here are the syntax's; that `p256dh` is a point on the curve is checked where the
/// subscription is stored (with the curve's arithmetic), before anything is written.
public struct WebPushSubscription: Sendable, Equatable {
    /// Where pushes are posted: a URL the push service chose, checked as the destination policy says.
    public let endpoint: String
    /// The browser's ECDH public key on P-256, uncompressed: 65 bytes, the first 0x04.
    public let p256dh: [UInt8]
    /// The 16-byte authentication secret the browser shares with the sender only.
    public let auth: [UInt8]

    /// The API's field names: the CLI's errors say them too, so one message reads the same on both.
    public static let endpointField = "subscription.endpoint"
    public static let p256dhField = "subscription.keys.p256dh"
    public static let authField = "subscription.keys.auth"

    /// - Parameters:
    ///   - p256dh, auth: base64url, padded or not, as browsers give them.
    ///   - policy: where a Web Push endpoint may lead (`DestinationPolicy(.webPush, …)`).
    /// - Throws: `InputError` naming the field at fault.
    public init(endpoint: String, p256dh: String, auth: String, policy: DestinationPolicy) throws {
        do {
            self.endpoint = try policy.url(endpoint).absoluteString
        } catch let error as InputError {
            throw InputError(error.description, field: Self.endpointField)
        }
        guard let key = Base64URL.decode(p256dh) else {
            throw InputError("p256dh is not base64url (letters, digits, - and _)", field: Self.p256dhField)
        }
        guard key.count == 65, key.first == 0x04 else {
            throw InputError(
                "p256dh is an uncompressed P-256 public key: 65 bytes starting with 0x04 (87 base64url characters), not \(key.count) bytes",
                field: Self.p256dhField)
        }
        guard let secret = Base64URL.decode(auth) else {
            throw InputError("auth is not base64url (letters, digits, - and _)", field: Self.authField)
        }
        guard secret.count == 16 else {
            throw InputError("auth is the 16-byte authentication secret (22 base64url characters), not \(secret.count) bytes", field: Self.authField)
        }
        self.p256dh = key
        self.auth = secret
    }

    /// A `PushSubscription` as the browser's `JSON.stringify` writes it (`expirationTime` is
    /// read past): the API's `subscription` and the CLI's `--subscription`.
    public struct Given: Decodable, Sendable {
        public struct Keys: Decodable, Sendable {
            public let p256dh: String
            public let auth: String
        }
        public let endpoint: String
        public let keys: Keys
    }

    /// - Throws: `InputError` naming the field at fault.
    public init(_ given: Given, policy: DestinationPolicy) throws {
        try self.init(endpoint: given.endpoint, p256dh: given.keys.p256dh, auth: given.keys.auth, policy: policy)
    }

    /// A subscription read back from the store, its parts checked when it was stored.
    public init(stored endpoint: String, p256dh: [UInt8], auth: [UInt8]) {
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
    }

    /// `https://push.example.net`: what lists show of a subscription (its path names the browser).
    public var origin: String { Self.origin(of: endpoint) }

    /// The scheme, host and port of `url` (the whole text when it has no `//`).
    public static func origin(of url: String) -> String {
        guard let start = url.range(of: "://") else { return url }
        let rest = url[start.upperBound...]
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        return String(url[..<end])
    }
}
