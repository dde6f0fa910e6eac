import Foundation
import HeraldTemplates
import Testing

@testable import HeraldPush

@Suite struct PayloadTests {
    static func notification(body: String = "Hi", image: String? = nil, sound: Bool = true) -> PushNotification {
        PushNotification(
            token: "device-token-1", message: RenderedMessage(title: "Alice Moreau in Launch crew", body: body), imageURL: image,
            data: [
                "type": "new_message", "conversationID": "c-1", "messageID": "m-1", "senderID": "p-1", "isGroup": "true", "timestamp": "1795303800000"
            ],
            badge: 3, sound: sound, threadID: "c-1")
    }

    func json(_ message: FCMMessage) throws -> [String: Any] {
        let root = try #require(try JSONSerialization.jsonObject(with: message.encoded()) as? [String: Any])
        return try #require(root["message"] as? [String: Any])
    }

    /// The hand-written JSON escapes what JSON requires and nothing a parser would read back
    /// differently: quotes, backslashes, control characters, emoji, slashes.
    @Test(arguments: ["say \"hi\"", "back\\slash", "line\nbreak\r\ttab", "bell\u{07}\u{01}\u{1F}", "🔻P0🔻 é 中文", "a/b</script>", ""])
    func textSurvivesTheRoundTrip(text: String) throws {
        var notification = Self.notification(body: text)
        notification.title = text
        notification.data["odd \"key\""] = text
        let message = try json(FCMMessage(notification))
        let fields = try #require(message["notification"] as? [String: String])
        #expect(fields["body"] == text && fields["title"] == text)
        #expect((message["data"] as? [String: String])?["odd \"key\""] == text)
        #expect(message["token"] as? String == "device-token-1")
    }

    @Test func theFCMRequestCarriesEverythingDesignSection3Asks() throws {
        let message = try json(FCMMessage(Self.notification(image: "https://example.test/group.png")))
        #expect(message["token"] as? String == "device-token-1")
        let notification = try #require(message["notification"] as? [String: Any])
        #expect(notification["title"] as? String == "Alice Moreau in Launch crew")
        #expect(notification["body"] as? String == "Hi")
        #expect(notification["image"] as? String == "https://example.test/group.png")
        let data = try #require(message["data"] as? [String: Any])
        #expect(data.values.allSatisfy { $0 is String })
        #expect(data["isGroup"] as? String == "true")
        let android = try #require(message["android"] as? [String: Any])
        #expect(android["priority"] as? String == "high")
        let androidNotification = try #require(android["notification"] as? [String: Any])
        #expect(androidNotification["tag"] as? String == "c-1")
        #expect(androidNotification["notification_count"] as? Int == 3)
        let apns = try #require(message["apns"] as? [String: Any])
        let aps = try #require((apns["payload"] as? [String: Any])?["aps"] as? [String: Any])
        #expect((aps["alert"] as? [String: String]) == ["title": "Alice Moreau in Launch crew", "body": "Hi"])
        #expect(aps["badge"] as? Int == 3)
        #expect(aps["sound"] as? String == "default")
        #expect(aps["thread-id"] as? String == "c-1")
        #expect(aps["mutable-content"] as? Int == 1)
        #expect((apns["fcm_options"] as? [String: String])?["image"] == "https://example.test/group.png")
    }

    /// An iPhone reached through FCM gets the same collapse identity as over direct APNs:
    /// FCM passes `message.apns.headers` on to APNs, and nothing was written there.
    @Test func activityPushesThroughFCMCarryTheAPNsCollapseHeaders() throws {
        var notification = Self.notification()
        notification.collapseID = "0193a1b2-activity"
        let headers = try #require((try json(FCMMessage(notification))["apns"] as? [String: Any])?["headers"] as? [String: String])
        #expect(headers == ["apns-collapse-id": "0193a1b2-activity", "apns-priority": "10", "apns-push-type": "alert"])
        let direct = APNsRequest(notification, topic: "test.member")
        for (name, value) in headers { #expect(direct.headers[name] == value, "\(name)") }
        let chat = try #require((try json(FCMMessage(Self.notification()))["apns"] as? [String: Any])?["headers"] as? [String: String])
        #expect(chat["apns-collapse-id"] == nil && chat["apns-push-type"] == "alert")
    }

    @Test func aMutedConversationHasNoSoundAndNoImageMeansNoMutableContent() throws {
        let message = try json(FCMMessage(Self.notification(sound: false)))
        let apns = try #require(message["apns"] as? [String: Any])
        let aps = try #require((apns["payload"] as? [String: Any])?["aps"] as? [String: Any])
        #expect(aps["sound"] == nil)
        #expect(aps["mutable-content"] == nil)
        #expect(apns["fcm_options"] == nil)
        #expect(((message["android"] as? [String: Any])?["notification"] as? [String: Any])?["sound"] == nil)
    }

    /// The buffer reserved for a request holds it whole when nothing needs escaping (one
    /// allocation a delivery, not a copy as it grows).
    @Test(arguments: [(nil, true), ("https://example.test/group.png", false)] as [(String?, Bool)])
    func theRequestFitsTheRoomReservedForIt(image: String?, sound: Bool) {
        for body in ["", "Hi", String(repeating: "Ship v2 by Friday. ", count: 20)] {
            var notification = Self.notification(body: body, image: image, sound: sound)
            notification.data["priority"] = "p0"
            let encoded = FCMMessage.encode(notification)
            #expect(encoded.count <= FCMMessage.capacity(notification), "\(encoded.count) bytes")
        }
    }

    @Test func aLongBodyIsShortenedUntilTheRequestFits() throws {
        let long = String(repeating: "Emoji 👩🏽‍💻 and text. ", count: 400)
        let message = FCMMessage(Self.notification(body: long))
        #expect(message.encoded().count <= FCMMessage.maxBytes)
        let body = try #require((try json(message)["notification"] as? [String: Any])?["body"] as? String)
        #expect(body.hasSuffix("..."))
        #expect(long.hasPrefix(body.dropLast(3)))
        #expect(body.count > 100, "the guard should keep as much as fits")
        // The APNs copy of the body is shortened the same way.
        let aps = try #require(((try json(message)["apns"] as? [String: Any])?["payload"] as? [String: Any])?["aps"] as? [String: Any])
        #expect((aps["alert"] as? [String: String])?["body"] == body)
    }

    @Test func theAPNsRequestHasAppleHeadersAndDataBesideAps() throws {
        let request = APNsRequest(Self.notification(), topic: "com.example.member", expiration: Date(timeIntervalSince1970: 1_795_390_200))
        #expect(request.path == "/3/device/device-token-1")
        #expect(request.headers["apns-topic"] == "com.example.member")
        #expect(request.headers["apns-push-type"] == "alert")
        #expect(request.headers["apns-priority"] == "10")
        #expect(request.headers["apns-expiration"] == "1795390200")
        let payload = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
        #expect(payload["conversationID"] as? String == "c-1")
        #expect((payload["aps"] as? [String: Any])?["thread-id"] as? String == "c-1")
        let long = APNsRequest(Self.notification(body: String(repeating: "x", count: 10_000)), topic: "t")
        #expect(long.body.count <= APNsRequest.maxBytes)
    }

    /// Whatever a token holds, it stays one segment of the request path.
    @Test func anAPNsTokenCannotLeaveItsPathSegment() {
        var notification = Self.notification()
        notification.token = "../../../v1/projects/x/messages:send?x=#"
        #expect(APNsRequest(notification, topic: "t").path == "/3/device/%2E%2E%2F%2E%2E%2F%2E%2E%2Fv1%2Fprojects%2Fx%2Fmessages%3Asend%3Fx%3D%23")
    }
}
