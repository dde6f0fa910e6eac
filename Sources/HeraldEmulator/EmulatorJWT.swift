import Crypto
import Foundation
import _CryptoExtras

/// JSON Web Tokens as the emulator checks them (RFC 7515 compact serialisation, RFC 7518
/// RS256 and ES256), written apart from HeraldPush's signer and verified with swift-crypto
/// directly: a bug in how Herald signs must not pass because the same code checks it.
enum EmulatorJWT {
    /// A token taken apart; its signature not checked yet.
    struct Parts {
        let header: [String: Any]
        let claims: [String: Any]
        /// `BASE64URL(header) . BASE64URL(claims)`, the bytes the signature covers.
        let signingInput: Data
        let signature: Data
    }

    /// Three base64url parts (no padding, nothing outside the URL-safe alphabet), the first
    /// two JSON objects; nil for anything else.
    static func parts(of token: String) -> Parts? {
        let pieces = token.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count == 3, let headerBytes = base64URL(pieces[0]), let claimBytes = base64URL(pieces[1]),
            let signature = base64URL(pieces[2]),
            let header = (try? JSONSerialization.jsonObject(with: headerBytes)) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: claimBytes)) as? [String: Any]
        else { return nil }
        return Parts(header: header, claims: claims, signingInput: Data("\(pieces[0]).\(pieces[1])".utf8), signature: signature)
    }

    /// The claims of an RS256 token `key` signed (RSASSA-PKCS1-v1_5 over SHA-256); nil when
    /// its header names another algorithm or the signature does not verify.
    static func verifiedRS256(_ token: String, key: _RSA.Signing.PublicKey) -> [String: Any]? {
        guard let parts = parts(of: token), parts.header["alg"] as? String == "RS256",
            key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: parts.signature), for: SHA256.hash(data: parts.signingInput),
                padding: .insecurePKCS1v1_5)
        else { return nil }
        return parts.claims
    }

    /// Whether an ES256 token's signature (the raw 64-byte r‖s of RFC 7518 §3.4, not DER)
    /// verifies with `key`.
    static func isValidES256(_ parts: Parts, key: P256.Signing.PublicKey) -> Bool {
        guard parts.header["alg"] as? String == "ES256", parts.signature.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: parts.signature)
        else { return false }
        return key.isValidSignature(signature, for: SHA256.hash(data: parts.signingInput))
    }

    /// Base64url without padding (RFC 7515 §2); nil for padding or any other character.
    static func base64URL(_ text: Substring) -> Data? {
        guard text.utf8.count % 4 != 1,
            text.utf8.allSatisfy({
                ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F
            })
        else { return nil }
        var base64 = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
