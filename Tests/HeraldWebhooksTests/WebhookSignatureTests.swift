import Foundation
import HeraldCore
import HeraldWebhooks
import Testing

/// Standard Webhooks signing (docs/webhooks.md), against a signature the specification's own library
/// made: `standardwebhooks` 1.x from PyPI, `Webhook(secret).sign(id, timestamp, body)` with the
/// specification's example secret, id, time and body.
@Suite struct WebhookSignatureTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let id = "msg_p5jXN8AQM9LWM0D4loKWxJek"
    static let timestamp: Int64 = 1_614_265_330
    static let body = Array(#"{"test": 2432232314}"#.utf8)
    /// What the library answered.
    static let expected = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

    @Test func theSignatureIsTheSpecificationsLibrarys() throws {
        let secret = try WebhookSecret(Self.secret)
        #expect(WebhookSignature.sign(id: Self.id, timestamp: Self.timestamp, body: Self.body, secret: secret) == Self.expected)
        // A byte more, another time or another id: another signature.
        #expect(WebhookSignature.sign(id: Self.id, timestamp: Self.timestamp + 1, body: Self.body, secret: secret) != Self.expected)
        #expect(WebhookSignature.sign(id: Self.id + "x", timestamp: Self.timestamp, body: Self.body, secret: secret) != Self.expected)
        #expect(WebhookSignature.sign(id: Self.id, timestamp: Self.timestamp, body: Self.body + [0x20], secret: secret) != Self.expected)
    }

    @Test func afterARotationBothSignaturesAreSentNewestFirst() throws {
        let old = try WebhookSecret(Self.secret)
        let new = WebhookSecret.generate()
        let headers = Dictionary(
            uniqueKeysWithValues: WebhookSignature.headers(id: Self.id, timestamp: Self.timestamp, body: Self.body, secrets: [new, old]).map {
                ($0.name, $0.value)
            })
        #expect(headers["webhook-id"] == Self.id && headers["webhook-timestamp"] == "1614265330")
        let signatures = try #require(headers["webhook-signature"]).split(separator: " ").map(String.init)
        #expect(signatures.count == 2 && signatures[1] == Self.expected && signatures[0].hasPrefix("v1,") && signatures[0] != Self.expected)
    }

    @Test func secretsAreWhsecAndEnoughRandomBytesAndNeverPrintedWhole() throws {
        let made = WebhookSecret.generate()
        #expect(made.text.hasPrefix("whsec_") && made.key.count == 32 && made != WebhookSecret.generate())
        #expect(try WebhookSecret(made.text) == made)
        #expect("\(made)" == made.preview && !made.preview.contains(String(made.text.dropFirst(10))))
        let tooShort = "whsec_" + Data(repeating: 7, count: 23).base64EncodedString()
        for bad in ["", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_not base64!", tooShort] {
            #expect(throws: InputError.self, "\(bad)") { try WebhookSecret(bad) }
        }
    }
}
