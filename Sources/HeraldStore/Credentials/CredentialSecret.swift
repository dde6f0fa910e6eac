import Crypto
import Foundation
import HeraldCore

/// A credential's secret as it is shown once and presented afterwards:
/// `hrp_` or `hrk_` (its kind), a 12-character public prefix (60 random bits), `_`, and
/// 52 characters holding 256 random bits, in lowercase base32 (`a-z`, `2-7`).
///
/// Only the SHA-256 of the whole text is stored. A hash this fast is enough for 256 random
/// bits: nothing guessable is behind it.
public struct CredentialSecret: Sendable {
    public let kind: CredentialKind
    /// The public part, stored as it is to find the credential by.
    public let prefix: String
    /// The whole secret, as the holder presents it.
    public let text: String

    static let prefixLength = 12
    static let secretLength = 52

    /// A new secret from the system's cryptographically secure generator.
    public static func generate(_ kind: CredentialKind) -> CredentialSecret {
        var generator = SystemRandomNumberGenerator()
        let prefix = Base32.encode((0..<8).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).prefix(prefixLength)
        let secret = Base32.encode((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).prefix(secretLength)
        return CredentialSecret(kind: kind, prefix: String(prefix), text: kind.secretPrefix + prefix + "_" + secret)
    }

    private init(kind: CredentialKind, prefix: String, text: String) {
        self.kind = kind
        self.prefix = prefix
        self.text = text
    }

    /// Reads a presented secret; nil for anything not shaped like one (nothing about it is
    /// looked up then).
    public init?(parsing text: String) {
        guard text.utf8.count == 4 + Self.prefixLength + 1 + Self.secretLength,
            let kind = CredentialKind.allCases.first(where: { text.hasPrefix($0.secretPrefix) })
        else { return nil }
        let body = Array(text.utf8.dropFirst(4))
        guard body[Self.prefixLength] == UInt8(ascii: "_"),
            body[..<Self.prefixLength].allSatisfy(Base32.isDigit),
            body[(Self.prefixLength + 1)...].allSatisfy(Base32.isDigit)
        else { return nil }
        self.init(kind: kind, prefix: String(decoding: body[..<Self.prefixLength], as: UTF8.self), text: text)
    }

    /// What is stored instead of the secret.
    public var sha256: Data { Data(SHA256.hash(data: Data(text.utf8))) }

    /// Whether this secret hashes to `stored`, comparing every byte whatever the first
    /// difference (no timing tells how much of a guess was right).
    public func matches(_ stored: Data) -> Bool {
        Self.equalInConstantTime(sha256, stored)
    }

    /// Whether two secrets or hashes are equal, looking at every byte whatever the first
    /// difference.
    public static func equalInConstantTime(_ presented: Data, _ stored: Data) -> Bool {
        guard presented.count == stored.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(presented, stored) { difference |= left ^ right }
        return difference == 0
    }

    /// 256 random bits from the system's secure generator, as 52 base32 characters.
    static func randomText() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(Base32.encode((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).prefix(secretLength))
    }
}

/// RFC 4648 base32 in lowercase, without padding.
enum Base32 {
    static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer = 0
        var bits = 0
        for byte in bytes {
            // Fewer than 13 bits are ever pending; keep no more than 16.
            buffer = ((buffer << 8) | Int(byte)) & 0xFFFF
            bits += 8
            while bits >= 5 {
                output.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        if bits > 0 { output.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return String(decoding: output, as: UTF8.self)
    }

    static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "2")...UInt8(ascii: "7")).contains(byte)
    }
}
