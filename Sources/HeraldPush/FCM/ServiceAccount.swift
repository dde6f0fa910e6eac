import Foundation
import _CryptoExtras

/// A Google service account (the JSON file `GOOGLE_APPLICATION_CREDENTIALS` names), as far
/// as FCM needs it. Printing it never shows the private key.
public struct ServiceAccount: Sendable, CustomStringConvertible {
    public let projectID: String
    public let clientEmail: String
    public let privateKeyID: String
    public let tokenURI: String
    let privateKey: _RSA.Signing.PrivateKey

    /// Reads and checks the file.
    /// - Throws: `PushConfigurationError` naming the file and what is wrong with it.
    public static func load(path: String) throws -> ServiceAccount {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let exists = FileManager.default.fileExists(atPath: path)
            throw PushConfigurationError(
                exists ? "cannot read the service account file \(path)" : "the service account file \(path) does not exist")
        }
        return try ServiceAccount(json: data, source: path)
    }

    /// Parses a service account's JSON.
    public init(json: Data, source: String = "the service account") throws {
        guard let object = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any] else {
            throw PushConfigurationError("\(source) is not a JSON object")
        }
        func field(_ name: String) throws -> String {
            guard let value = object[name] as? String, !value.isEmpty else {
                throw PushConfigurationError("\(source) has no \"\(name)\"")
            }
            return value
        }
        if let type = object["type"] as? String, type != "service_account" {
            throw PushConfigurationError("\(source) is a \"\(type)\" credential, not a service account")
        }
        projectID = try field("project_id")
        clientEmail = try field("client_email")
        privateKeyID = try field("private_key_id")
        tokenURI = (object["token_uri"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? "https://oauth2.googleapis.com/token"
        let pem = try field("private_key")
        do {
            privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw PushConfigurationError("\(source) has a \"private_key\" that is not a readable RSA private key in PEM form")
        }
    }

    init(projectID: String, clientEmail: String, privateKeyID: String, tokenURI: String, privateKey: _RSA.Signing.PrivateKey) {
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKeyID = privateKeyID
        self.tokenURI = tokenURI
        self.privateKey = privateKey
    }

    public var description: String {
        "ServiceAccount(project: \(projectID), client: \(clientEmail), key id: \(privateKeyID.prefix(8))…, token URI: \(tokenURI))"
    }

    /// The OAuth scope FCM sends need.
    public static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"

    /// A signed JWT-bearer assertion (RFC 7523) for the token endpoint, valid for `lifetime`
    /// (at most an hour, as Google requires).
    public func assertion(issuedAt: Date, lifetime: Duration = .seconds(3600)) throws -> String {
        let seconds = min(3600, max(60, lifetime.components.seconds))
        let issued = Int64(issuedAt.timeIntervalSince1970)
        return try JWT.signRS256(
            header: ["alg": "RS256", "typ": "JWT", "kid": privateKeyID],
            claims: [
                "iss": .string(clientEmail), "scope": .string(Self.messagingScope), "aud": .string(tokenURI),
                "iat": .integer(issued), "exp": .integer(issued + seconds)
            ],
            key: privateKey)
    }

    /// The form body of the token request.
    public func tokenRequestBody(issuedAt: Date) throws -> String {
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + (try assertion(issuedAt: issuedAt))
    }
}
