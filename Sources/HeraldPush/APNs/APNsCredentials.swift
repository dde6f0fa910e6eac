import CoreMetrics
import Crypto
import Foundation

/// An APNs provider key (`.p8`): signs the ES256 provider tokens APNs expects, reusing each
/// for up to 50 minutes (Apple refuses tokens older than an hour, and refreshes more
/// often than every 20 minutes).
public actor APNsCredentials {
    public let keyID: String
    public let teamID: String
    private let key: P256.Signing.PrivateKey
    private let now: @Sendable () -> Date
    private let lifetime: TimeInterval
    private var current: (token: String, issuedAt: Date)?
    private let refreshes = Counter(label: "herald_access_token_refreshes_total", dimensions: [("provider", "apns")])

    /// - Throws: `PushConfigurationError` for a missing or unreadable key.
    public init(keyFile: String, keyID: String, teamID: String, lifetime: Duration = .seconds(3000), now: @escaping @Sendable () -> Date = { Date() })
        throws
    {
        guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8) else {
            throw PushConfigurationError(
                FileManager.default.fileExists(atPath: keyFile)
                    ? "cannot read the APNs key file \(keyFile)" : "the APNs key file \(keyFile) does not exist")
        }
        try self.init(pem: pem, keyID: keyID, teamID: teamID, lifetime: lifetime, now: now, source: keyFile)
    }

    public init(
        pem: String, keyID: String, teamID: String, lifetime: Duration = .seconds(3000), now: @escaping @Sendable () -> Date = { Date() },
        source: String = "the APNs key"
    ) throws {
        guard !keyID.isEmpty else { throw PushConfigurationError("HERALD_APNS_KEY_ID is empty") }
        guard !teamID.isEmpty else { throw PushConfigurationError("HERALD_APNS_TEAM_ID is empty") }
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw PushConfigurationError("\(source) is not a P-256 private key in PEM form (an AuthKey_….p8 file)")
        }
        self.keyID = keyID
        self.teamID = teamID
        self.lifetime = Double(lifetime.components.seconds)
        self.now = now
    }

    /// The `authorization: bearer …` token, made anew when older than the lifetime.
    public func providerToken() throws -> String {
        let time = now()
        if let current, time.timeIntervalSince(current.issuedAt) < lifetime { return current.token }
        let token = try JWT.signES256(
            header: ["alg": "ES256", "kid": keyID], claims: ["iss": .string(teamID), "iat": .integer(Int64(time.timeIntervalSince1970))],
            key: key)
        current = (token, time)
        refreshes.increment()
        return token
    }

    /// APNs said ExpiredProviderToken: the next call signs a new one.
    public func renew() {
        current = nil
    }
}
