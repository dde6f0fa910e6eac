import Crypto
import Foundation
import HeraldCore
import HeraldTemplates
import Testing

@testable import HeraldPush

/// Every push fits its provider by construction (docs/apps.md#what-a-push-holds), measured in
/// bytes of the final request — FCM's whole request 4,096, APNs' payload 4,096, Web Push's
/// plaintext 3,993 before encryption — with the worst characters a person may write: four-byte
/// emoji, combining marks, variation selectors (one cluster of a thousand scalars), right-to-left
/// text, quotes that JSON escapes. What the app can fetch goes by reference first, then the
/// body is cut, then the title.
@Suite struct PayloadFitTests {
    /// The longest name the input rules allow (200 scalars) of each kind of worst character.
    static let names: [String: String] = [
        "four-byte emoji": String(repeating: "🔻", count: Input.maxNameLength),
        "combining marks": "e" + String(repeating: "\u{301}", count: Input.maxNameLength - 1),
        "variation selectors": "a" + String(repeating: "\u{E0100}", count: Input.maxNameLength - 1),
        "right to left": String(repeating: "\u{5E9}\u{5DC}\u{5D5}\u{5DD}\u{200F}", count: Input.maxNameLength / 5),
        "quotes": String(repeating: "\"", count: Input.maxNameLength)
    ]
    /// The longest message text (1,000 scalars), as a preview of it is pushed.
    static let texts: [String: String] = [
        "one cluster of 1,000 scalars": "a" + String(repeating: "\u{E0100}", count: Input.maxTextLength - 1),
        "four-byte emoji": String(repeating: "👩🏽‍💻", count: Input.maxTextLength / 7),
        "right to left": String(repeating: "\u{5E9}\u{5DC}\u{5D5}\u{5DD} ", count: Input.maxTextLength / 5)
    ]

    /// A group message from `sender` in `group`, rendered as fan-out does; or the digest of 50
    /// of them, with every id.
    static let catalog = TemplateCatalog()

    static func push(sender: String, group: String, text: String, digest: Bool) async throws -> PushNotification {
        let template = try await catalog.template(for: digest ? .digest : .chatGroup, locale: "en", tenant: nil)
        let message =
            digest
            ? template.render(
                TemplateVariables.Digest(
                    scope: group, isChat: true,
                    items: (0..<50).map { _ in .init(event: .chatMessage, sender: sender, text: TextShortening.preview(text)) }))
            : template.render(TemplateVariables.Chat(sender: sender, group: group, isGroup: true, text: text))
        // The payloads fan-out and digests build.
        let data =
            digest
            ? PushPayload.digest(id: UUID(), notificationIDs: (0..<50).map { _ in UUID() }, teamID: nil, conversationID: UUID())
            : PushPayload.chatMessage(
                conversationID: UUID(), messageID: UUID(), senderID: UUID(), isGroup: true, sentAtMilliseconds: 1_795_303_800_000)
        return PushNotification(
            token: String(repeating: "f", count: 163), message: message, imageURL: "https://img.acme.test/" + String(repeating: "p", count: 200),
            data: data, badge: 999, sound: true, threadID: UUID().lowercasedString)
    }

    static func subscription() throws -> WebPushSubscription {
        let browser = P256.KeyAgreement.PrivateKey()
        return try WebPushSubscription(
            endpoint: "https://push.example.test/send/abc", p256dh: Base64URL.encode(browser.publicKey.x963Representation),
            auth: Base64URL.encode(Array(repeating: 7, count: 16)), policy: DestinationPolicy(.webPush))
    }

    @Test func everyPushFitsEveryProviderWithTheWorstCharacters() async throws {
        let subscription = try Self.subscription()
        for (nameKind, name) in Self.names {
            for (textKind, text) in Self.texts {
                for digest in [false, true] {
                    let push = try await Self.push(sender: name, group: name, text: text, digest: digest)
                    let what = "\(digest ? "digest" : "message"), \(nameKind) names, \(textKind) text"
                    let fcm = FCMMessage(push)
                    #expect(fcm.body.count <= FCMMessage.maxBytes, "FCM, \(what): \(fcm.body.count)")
                    #expect(try JSONSerialization.jsonObject(with: fcm.encoded()) is [String: Any], "FCM, \(what)")
                    let apns = APNsRequest(push, topic: "com.acme.member")
                    #expect(apns.body.count <= APNsRequest.maxBytes, "APNs, \(what): \(apns.body.count)")
                    let web = WebPushMessage(push, expiration: nil, now: Date())
                    #expect(web.body.count <= WebPushEncryption.maxPlaintext, "Web Push, \(what): \(web.body.count)")
                    let encrypted = try WebPushEncryption.encrypt(web.body, to: subscription)
                    #expect(encrypted.count <= WebPushEncryption.maxBody, "Web Push encrypted, \(what)")
                    // The ids the app needs to open it are always there.
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(web.body)) as? [String: Any])
                    let data = try #require((object["notification"] as? [String: Any])?["data"] as? [String: String])
                    #expect(data[digest ? "digestId" : "messageID"] != nil, "\(what)")
                }
            }
        }
    }

    /// The issue's case: one grapheme of 3,997 bytes was pushed whole and Web Push refused it.
    @Test func aClusterOfFourKilobytesIsCutForWebPush() async throws {
        let text = "a" + String(repeating: "\u{E0100}", count: 999)
        var push = try await Self.push(sender: "Bob", group: "Ops", text: text, digest: false)
        push.body = text  // even unpreviewed
        let web = WebPushMessage(push, expiration: nil, now: Date())
        #expect(web.body.count <= WebPushEncryption.maxPlaintext)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(web.body)) as? [String: Any])
        let body = try #require((object["notification"] as? [String: Any])?["body"] as? String)
        #expect(
            text.unicodeScalars.starts(with: body.unicodeScalars.dropLast(3)) && body.hasSuffix("...") && body.utf8.count > 3_000,
            "\(body.utf8.count) bytes")
        _ = try WebPushEncryption.encrypt(web.body, to: try Self.subscription())
    }

    /// The order: ids by reference, then the body, then the title — each only as far as needed.
    @Test func idsGoByReferenceThenTheBodyThenTheTitleIsCut() async throws {
        let emoji = String(repeating: "🔻", count: Input.maxNameLength)
        let digest = try await Self.push(sender: "Bob", group: emoji, text: "short", digest: true)
        // The ids alone are too many: they go, and the words stay whole.
        let (fitted, bytes) = PayloadFit.fit(digest, limit: FCMMessage.maxBytes, encode: FCMMessage.encode)
        #expect(bytes.count <= FCMMessage.maxBytes)
        #expect(fitted.data["notificationIds"] == nil && fitted.data["digestId"] == digest.data["digestId"])
        #expect(fitted.title == digest.title)
        // A push that fits keeps its ids.
        let small = try await Self.push(sender: "Bob", group: "Ops", text: "short", digest: true)
        var fewer = small
        fewer.data["notificationIds"] = (0..<3).map { _ in UUID().lowercasedString }.joined(separator: ",")
        #expect(PayloadFit.fit(fewer, limit: FCMMessage.maxBytes, encode: FCMMessage.encode).notification == fewer)
        // The body is cut before the title, and the title only when the body is cut to nothing.
        var long = try await Self.push(sender: "Bob", group: emoji, text: "x", digest: false)
        long.body = String(repeating: "x", count: 3_000)
        let cut = PayloadFit.fit(long, limit: FCMMessage.maxBytes, encode: FCMMessage.encode).notification
        #expect(cut.body.hasSuffix("...") && cut.body.count < 3_000 && cut.title == long.title)
        let tight = PayloadFit.fit(long, limit: 2_300, encode: FCMMessage.encode)
        #expect(tight.notification.body == "..." && tight.notification.title.hasSuffix("...") && tight.bytes.count <= 2_300)
        #expect(long.title.hasPrefix(tight.notification.title.dropLast(3)))
    }
}
