import CoreMetrics
import Crypto
import Foundation
import HeraldCore
import Synchronization

/// The application server's identity for Web Push (RFC 8292, VAPID): a P-256 key whose public
/// half pages pass to `pushManager.subscribe()` as `applicationServerKey`, and the contact
/// (`sub`) push services may write to. Each push carries `Authorization: vapid t=<JWT>, k=<key>`;
/// the JWT names the push service's origin (`aud`), so one is signed per origin and reused
/// until `refreshBefore` of its 12 hours are left (docs/apps.md#web-push-browsers-and-installed-web-apps).
public final class VAPIDCredentials: Sendable {
    /// How long a signed token is valid (RFC 8292 allows at most 24 hours).
    public static let lifetime: TimeInterval = 12 * 3600
    /// A token with less than this left is signed again.
    public static let refreshBefore: TimeInterval = 3600

    /// Origins whose tokens are kept at once.
    static let maxOrigins = 1_024

    /// The private key's scalar (the key type is not `Sendable`; a token is signed rarely).
    private let key: Data
    /// `mailto:…` or `https://…`.
    public let subject: String
    /// The public key, uncompressed, in base64url: `GET /v1/webpush/key`, the header's `k`.
    public let publicKey: String
    private let now: @Sendable () -> Date
    private let tokens = Mutex<[String: (token: String, expires: Date)]>([:])
    private let signed = Counter(label: "herald_access_token_refreshes_total", dimensions: [("provider", "webpush")])

    /// - Throws: `PushConfigurationError` for a key that is not P-256 or a subject that is
    ///   neither `mailto:` nor `https:`.
    public init(pem: String, subject: String, source: String = "the Web Push key", now: @escaping @Sendable () -> Date = { Date() }) throws {
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw PushConfigurationError("\(source) is not a P-256 private key in PEM form (herald webpush keys --out FILE makes one)")
        }
        let lowered = subject.lowercased()
        guard (lowered.hasPrefix("mailto:") && subject.count > 7) || (lowered.hasPrefix("https://") && subject.count > 8),
            subject.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7f })
        else {
            throw PushConfigurationError(
                "HERALD_WEBPUSH_SUBJECT must be a mailto: or https: URL a push service can reach you at, not \"\(Input.printable(subject))\"")
        }
        self.key = key.rawRepresentation
        self.subject = subject
        self.publicKey = Base64URL.encode(key.publicKey.x963Representation)
        self.now = now
    }

    /// Reads the key from `keyFile`.
    /// - Throws: `PushConfigurationError` when it is missing, unreadable or not a P-256 key.
    public convenience init(keyFile: String, subject: String) throws {
        guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8) else {
            throw PushConfigurationError(
                FileManager.default.fileExists(atPath: keyFile)
                    ? "cannot read the Web Push key file \(keyFile)" : "the Web Push key file \(keyFile) does not exist")
        }
        try self.init(pem: pem, subject: subject, source: keyFile)
    }

    /// A new key, as `herald webpush keys` writes it: its PEM (PKCS#8) and public key.
    public static func newKey() -> (pem: String, publicKey: String) {
        let key = P256.Signing.PrivateKey()
        return (key.pemRepresentation, Base64URL.encode(key.publicKey.x963Representation))
    }

    /// The `Authorization` header's value for a push to `origin` (`https://host[:port]`).
    /// - Throws: `PushConfigurationError` when the token cannot be signed.
    public func authorization(for origin: String) throws -> String {
        let time = now()
        if let current = tokens.withLock({ $0[origin] }), current.expires.timeIntervalSince(time) > Self.refreshBefore {
            return "vapid t=\(current.token), k=\(publicKey)"
        }
        let expires = time.addingTimeInterval(Self.lifetime)
        let token: String
        do {
            token = try JWT.signES256(
                header: ["typ": "JWT", "alg": "ES256"],
                claims: ["aud": .string(origin), "exp": .integer(Int64(expires.timeIntervalSince1970)), "sub": .string(subject)],
                key: try P256.Signing.PrivateKey(rawRepresentation: key))
        } catch {
            throw PushConfigurationError("cannot sign a VAPID token: \(error)")
        }
        tokens.withLock { tokens in
            // Origins are the few push services; endpoints that name many more are not kept.
            if tokens.count >= Self.maxOrigins { tokens.removeAll() }
            tokens[origin] = (token, expires)
        }
        signed.increment()
        return "vapid t=\(token), k=\(publicKey)"
    }

    /// The push service refused the token (401): the next push to `origin` signs a new one.
    public func forget(_ origin: String) { _ = tokens.withLock { $0.removeValue(forKey: origin) } }
}
