import Crypto
import Foundation
import HeraldCore
import _CryptoExtras

/// Compact JSON Web Tokens: RS256 for Google's OAuth, ES256 for APNs.
public enum JWT {
    /// A claim value: JWT claims here are strings and integers only.
    public enum Claim: Sendable, Equatable, Encodable {
        case string(String)
        case integer(Int64)

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .integer(let value): try container.encode(value)
            }
        }
    }

    static func signingInput(header: [String: String], claims: [String: Claim]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return base64URL(try encoder.encode(header)) + "." + base64URL(try encoder.encode(claims))
    }

    /// RSASSA-PKCS1-v1_5 with SHA-256.
    static func signRS256(header: [String: String], claims: [String: Claim], key: _RSA.Signing.PrivateKey) throws -> String {
        let input = try signingInput(header: header, claims: claims)
        let signature = try key.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + base64URL(signature.rawRepresentation)
    }

    /// ECDSA P-256 with SHA-256, signature as raw r‖s.
    static func signES256(header: [String: String], claims: [String: Claim], key: P256.Signing.PrivateKey) throws -> String {
        let input = try signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + base64URL(signature.rawRepresentation)
    }

    static func base64URL(_ data: some DataProtocol) -> String { Base64URL.encode(data) }
}
