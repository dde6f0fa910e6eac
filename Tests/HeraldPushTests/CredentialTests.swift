import Crypto
import Foundation
import HeraldPush
import HeraldTesting
import Testing
import _CryptoExtras

@Suite struct ServiceAccountTests {
    static let key: _RSA.Signing.PrivateKey? = try? _RSA.Signing.PrivateKey(keySize: .bits2048)

    static func json(dropping field: String? = nil, privateKey: String? = nil) throws -> Data {
        let key = try #require(Self.key)
        var object: [String: String] = [
            "type": "service_account", "project_id": "herald-dev", "private_key_id": "0123456789abcdef",
            "private_key": privateKey ?? key.pkcs8PEMRepresentation, "client_email": "herald@herald-dev.iam.gserviceaccount.com",
            "token_uri": "http://127.0.0.1:9099/token"
        ]
        if let field { object[field] = nil }
        return try JSONSerialization.data(withJSONObject: object)
    }

    @Test func theAssertionIsASignedJWTBearerGrant() throws {
        let account = try ServiceAccount(json: try Self.json())
        #expect(account.projectID == "herald-dev")
        let issued = Date(timeIntervalSince1970: 1_795_303_800)
        let assertion = try account.assertion(issuedAt: issued)
        let publicKey = try #require(Self.key?.publicKey)
        let claims = try #require(verifiedRS256(assertion, publicKey: publicKey))
        #expect(claims["iss"] as? String == "herald@herald-dev.iam.gserviceaccount.com")
        #expect(claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(claims["aud"] as? String == "http://127.0.0.1:9099/token")
        let iat = try #require(claims["iat"] as? Int)
        let exp = try #require(claims["exp"] as? Int)
        #expect(iat == 1_795_303_800 && exp - iat <= 3600 && exp > iat)
        let header = try #require(Data(base64Encoded: String(assertion.split(separator: ".")[0]) + "=="))
        let headerObject = try JSONSerialization.jsonObject(with: header) as? [String: String]
        #expect(headerObject?["kid"] == "0123456789abcdef")
        #expect(headerObject?["alg"] == "RS256")
        // Another key's signature does not verify.
        let other = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        #expect(verifiedRS256(assertion, publicKey: other.publicKey) == nil)
        #expect(
            try account.tokenRequestBody(issuedAt: issued).hasPrefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=ey"))
    }

    @Test func printingTheAccountNeverShowsTheKey() throws {
        let account = try ServiceAccount(json: try Self.json())
        let pem = try #require(Self.key?.pkcs8PEMRepresentation)
        let body = pem.split(separator: "\n")[1]
        #expect(!"\(account)".contains(body))
        #expect(!String(reflecting: account).contains("PRIVATE KEY"))
    }

    @Test(arguments: ["private_key", "client_email", "project_id", "private_key_id"])
    func aMissingFieldIsNamed(field: String) throws {
        let error = #expect(throws: PushConfigurationError.self) { try ServiceAccount(json: try Self.json(dropping: field)) }
        #expect(error?.description.contains("\"\(field)\"") == true)
    }

    @Test func badFilesAreExplainedWithoutTheKey() throws {
        let malformed = "-----BEGIN PRIVATE KEY-----\nnot really a key SECRETSTUFF\n-----END PRIVATE KEY-----\n"
        let error = #expect(throws: PushConfigurationError.self) { try ServiceAccount(json: try Self.json(privateKey: malformed)) }
        #expect(error?.description.contains("not a readable RSA private key") == true)
        #expect(error?.description.contains("SECRETSTUFF") == false)

        #expect(throws: PushConfigurationError.self) { try ServiceAccount(json: Data("not json".utf8)) }
        let missing = #expect(throws: PushConfigurationError.self) { try ServiceAccount.load(path: "/nonexistent/sa.json") }
        #expect(missing?.description.contains("does not exist") == true)
    }
}

@Suite struct AccessTokenCacheTests {
    actor Counter {
        var value = 0
        func next() -> Int {
            value += 1
            return value
        }
    }

    @Test func aThousandConcurrentSendsShareOneFetch() async throws {
        let counter = Counter()
        let clock = ManualClock()
        let cache = AccessTokenCache(
            now: { clock.now() },
            fetch: {
                let n = await counter.next()
                try await Task.sleep(for: .milliseconds(20))
                return AccessToken(value: "token-\(n)", expiresAt: clock.now().addingTimeInterval(3600))
            })
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<1000 { group.addTask { try await cache.token() } }
            var tokens: [String] = []
            for try await token in group { tokens.append(token) }
            return tokens
        }
        #expect(Set(tokens) == ["token-1"])
        #expect(await cache.fetches == 1)
    }

    @Test func theTokenIsRefreshedFiveMinutesBeforeItExpires() async throws {
        let counter = Counter()
        let clock = ManualClock()
        let cache = AccessTokenCache(
            now: { clock.now() },
            fetch: {
                AccessToken(value: "token-\(await counter.next())", expiresAt: clock.now().addingTimeInterval(3600))
            })
        #expect(try await cache.token() == "token-1")
        clock.advance(3600 - 301)
        #expect(try await cache.token() == "token-1")
        clock.advance(2)
        #expect(try await cache.token() == "token-2")
    }

    @Test func aRejectedTokenCausesOneRefreshForAllWhoSawIt() async throws {
        let counter = Counter()
        let clock = ManualClock()
        let cache = AccessTokenCache(
            now: { clock.now() },
            fetch: {
                AccessToken(value: "token-\(await counter.next())", expiresAt: clock.now().addingTimeInterval(3600))
            })
        let first = try await cache.token()
        await cache.invalidate(first)
        #expect(try await cache.token() == "token-2")
        await cache.invalidate(first)  // a late 401 for the old token changes nothing
        #expect(try await cache.token() == "token-2")
        #expect(await cache.fetches == 2)
    }

    @Test func aFailedFetchIsReportedAndTheNextCallTriesAgain() async throws {
        struct Refused: Error {}
        let counter = Counter()
        let cache = AccessTokenCache {
            if await counter.next() == 1 { throw Refused() }
            return AccessToken(value: "ok", expiresAt: Date().addingTimeInterval(3600))
        }
        await #expect(throws: Refused.self) { try await cache.token() }
        #expect(try await cache.token() == "ok")
    }
}

@Suite struct APNsCredentialsTests {
    @Test func theProviderTokenIsReusedFor50MinutesThenRenewed() async throws {
        let key = P256.Signing.PrivateKey()
        let clock = ManualClock()
        let credentials = try APNsCredentials(pem: key.pemRepresentation, keyID: "ABC123DEFG", teamID: "TEAM123456", now: { clock.now() })
        let first = try await credentials.providerToken()
        clock.advance(49 * 60)
        #expect(try await credentials.providerToken() == first)
        clock.advance(2 * 60)
        let second = try await credentials.providerToken()
        #expect(second != first)
        await credentials.renew()
        clock.advance(1)
        #expect(try await credentials.providerToken() != second)

        let parts = first.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        func decode(_ text: String) -> Data? {
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64 += "=" }
            return Data(base64Encoded: base64)
        }
        let header = try JSONSerialization.jsonObject(with: try #require(decode(parts[0]))) as? [String: String]
        #expect(header == ["alg": "ES256", "kid": "ABC123DEFG"])
        let claims = try JSONSerialization.jsonObject(with: try #require(decode(parts[1]))) as? [String: Any]
        #expect(claims?["iss"] as? String == "TEAM123456")
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(decode(parts[2])))
        #expect(key.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
    }

    @Test func aBadKeyIsExplained() {
        let error = #expect(throws: PushConfigurationError.self) {
            try APNsCredentials(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", keyID: "K", teamID: "T")
        }
        #expect(error?.description.contains(".p8") == true)
        #expect(throws: PushConfigurationError.self) { try APNsCredentials(keyFile: "/nonexistent.p8", keyID: "K", teamID: "T") }
    }
}

/// An RS256 token's claims when `publicKey` signed it: checked here with swift-crypto, not
/// with HeraldPush's own code, so that a signing bug cannot pass on both sides.
private func verifiedRS256(_ token: String, publicKey: _RSA.Signing.PublicKey) -> [String: Any]? {
    func bytes(_ part: Substring) -> Data? {
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3, let signature = bytes(parts[2]), let claims = bytes(parts[1]),
        publicKey.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: Data("\(parts[0]).\(parts[1])".utf8)),
            padding: .insecurePKCS1v1_5)
    else { return nil }
    return (try? JSONSerialization.jsonObject(with: claims)) as? [String: Any]
}
