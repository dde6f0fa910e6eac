import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldAPI

/// A browser's subscription through `POST /v1/devices` and the key pages subscribe with
/// (docs/apps.md#web-push-browsers-and-installed-web-apps, docs/api.md).
@Suite struct APIWebPushTests {
    /// The browser key and secret of RFC 8291's worked example: a real point on P-256.
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let endpoint = "https://push.example.net/wpush/v2/gAAAAABk-secret-path-of-this-browser"

    static func body(
        endpoint: String = endpoint, p256dh: String = p256dh, auth: String = auth, platform: String = "web", provider: String = "webpush"
    )
        -> [String: Any]
    {
        [
            "app": "member", "platform": platform, "provider": provider,
            "subscription": ["endpoint": endpoint, "expirationTime": NSNull(), "keys": ["p256dh": p256dh, "auth": auth]]
        ]
    }

    @Test func aBrowserRegistersItsSubscriptionAndOnlyItsOriginIsShown() async throws {
        try await APIHarness.with { api in
            let chidi = try await api.token("chidi@acme.test")
            let device = try await api.call("POST", "/v1/devices", token: chidi, json: Self.body())
            let text = String(decoding: device.body, as: UTF8.self)
            #expect(device.status == 201, "\(text)")
            #expect(device.json["provider"] as? String == "webpush" && device.json["platform"] as? String == "web")
            #expect(device.json["tokenPreview"] as? String == "https://push.example.net")
            // Neither the endpoint's path nor the keys are ever echoed.
            #expect(!text.contains("secret-path") && !text.contains(Self.p256dh) && !text.contains(Self.auth))
            let location = try #require(device.headers["location"])
            #expect(try await api.call("POST", "/v1/devices", token: chidi, json: Self.body()).status == 200)
            let listed = try await api.call("GET", "/v1/devices", token: chidi)
            #expect(listed.items.map { $0["tokenPreview"] as? String } == ["https://push.example.net"])
            #expect(!String(decoding: listed.body, as: UTF8.self).contains("secret-path"))
            // The browser unsubscribes: the device is logged out by its Location.
            #expect(try await api.call("DELETE", location, token: chidi).status == 204, "\(location)")
            #expect(try await api.call("GET", "/v1/devices", token: chidi).items.first?["state"] as? String == "removed")
        }
    }

    /// Each bad part is a 422 that names its field, and nothing is written.
    @Test func aBadSubscriptionIsA422NamingItsField() async throws {
        try await APIHarness.with { api in
            let chidi = try await api.token("chidi@acme.test")
            let offCurve = "BA" + String(repeating: "A", count: 85)
            let refusals: [([String: Any], String)] = [
                (Self.body(p256dh: "not base64url!"), "subscription.keys.p256dh"),
                (Self.body(p256dh: "BCVxsr7N_eNgVRqvHtD0zTZsEc6"), "subscription.keys.p256dh"),
                (Self.body(p256dh: offCurve), "subscription.keys.p256dh"),
                (Self.body(auth: "BTBZMqHH6r4Tts7J_aSI"), "subscription.keys.auth"),
                (Self.body(endpoint: "http://push.example.net/x"), "subscription.endpoint"),
                (Self.body(endpoint: "not a url"), "subscription.endpoint"),
                // Loopback, private, link-local, the metadata service, in any notation.
                (Self.body(endpoint: "https://127.0.0.1/push/x"), "subscription.endpoint"),
                (Self.body(endpoint: "https://[::1]/push/x"), "subscription.endpoint"),
                (Self.body(endpoint: "https://10.1.2.3/push/x"), "subscription.endpoint"),
                (Self.body(endpoint: "https://192.168.0.9/push/x"), "subscription.endpoint"),
                (Self.body(endpoint: "https://169.254.10.10/push/x"), "subscription.endpoint"),
                (Self.body(endpoint: "https://169.254.169.254/latest/meta-data"), "subscription.endpoint"),
                (Self.body(endpoint: "https://0xa9fea9fe/latest"), "subscription.endpoint"),
                (Self.body(platform: "android"), "platform"),
                (Self.body(provider: "fcm"), "provider"),
                (["app": "member", "platform": "web", "provider": "webpush", "token": "abc"], "subscription")
            ]
            for (body, field) in refusals {
                let refused = try await api.call("POST", "/v1/devices", token: chidi, json: body)
                let fields = (refused.json["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
                #expect(refused.status == 422 && refused.isProblem && fields == [field], "\(field): \(String(decoding: refused.body, as: UTF8.self))")
            }
            #expect(try await api.countRegisteredDevices() == 0)
        }
    }

    /// An operator may allow internal push services (tests, internal networks); the metadata service never.
    @Test func allowingPrivateAddressesNeverAllowsTheMetadataService() async throws {
        let inside = WebPushSettings(policy: DestinationPolicy(.webPush, allowHTTP: true, allowPrivate: true))
        try await APIHarness.with(webPush: inside) { api in
            let chidi = try await api.token("chidi@acme.test")
            #expect(try await api.call("POST", "/v1/devices", token: chidi, json: Self.body(endpoint: "http://127.0.0.1:9/push/x")).status == 201)
            let metadata = try await api.call(
                "POST", "/v1/devices", token: chidi, json: Self.body(endpoint: "http://169.254.169.254/latest/meta-data"))
            #expect(metadata.status == 422 && String(decoding: metadata.body, as: UTF8.self).contains("metadata"))
        }
    }

    @Test func theKeyIsAnsweredToTheSignedInAndNotFoundWithoutConfiguration() async throws {
        try await APIHarness.with { api in
            let chidi = try await api.token("chidi@acme.test")
            let missing = try await api.call("GET", "/v1/webpush/key", token: chidi)
            #expect(missing.status == 404 && missing.isProblem && (missing.json["detail"] as? String)?.contains("HERALD_WEBPUSH_KEY_FILE") == true)
        }
        let key = "BDd3_hVL9fZi9Ybo2UUzA284WG5FZR30_95YeZJsiApwXKpNcF1rRPF3foIiBHXRdJI2Qhumhf6_LFTeZaNndIo"
        try await APIHarness.with(webPush: WebPushSettings(publicKey: key)) { api in
            let chidi = try await api.token("chidi@acme.test")
            let answered = try await api.call("GET", "/v1/webpush/key", token: chidi)
            #expect(answered.status == 200 && answered.json["publicKey"] as? String == key)
            #expect(try await api.call("GET", "/v1/webpush/key", token: nil).status == 401)
        }
    }
}
