import Crypto
import Foundation
import HeraldCore

/// An endpoint's signing secret (docs/webhooks.md), as Standard Webhooks writes it: `whsec_` and the
/// base64 of the key. Made of 32 random bytes; read back from at least 24. Shown whole only
/// once, when made (`text`); everywhere else as `preview`.
public struct WebhookSecret: Sendable, Equatable, CustomStringConvertible {
    public static let prefix = "whsec_"
    /// The fewest key bytes a secret may hold.
    public static let minimumBytes = 24

    /// The HMAC key.
    public let key: [UInt8]

    /// A new secret of 32 random bytes.
    public static func generate() -> WebhookSecret {
        WebhookSecret(key: SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
    }

    private init(key: [UInt8]) { self.key = key }

    /// A secret as written (`whsec_…`).
    /// - Throws: `InputError` for anything else.
    public init(_ text: String) throws {
        guard text.hasPrefix(Self.prefix), let key = Data(base64Encoded: String(text.dropFirst(Self.prefix.count))),
            key.count >= Self.minimumBytes
        else {
            throw InputError("a webhook secret is whsec_ and the base64 of at least \(Self.minimumBytes) bytes")
        }
        self.key = Array(key)
    }

    /// The whole secret: for the one answer that shows it, and for storing it.
    public var text: String { Self.prefix + Data(key).base64EncodedString() }

    /// Enough to tell two secrets apart, never enough to sign: `whsec_` and 4 characters.
    public var preview: String { Self.prefix + String(Data(key).base64EncodedString().prefix(4)) + "…" }

    /// The preview: a secret printed by mistake does not leak.
    public var description: String { preview }
}
