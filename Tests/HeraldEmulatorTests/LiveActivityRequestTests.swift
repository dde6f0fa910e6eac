import Crypto
import Foundation
import HeraldCore
import HeraldEmulator
import HeraldHTTP
import HeraldPush
import Testing

/// ActivityKit pushes (docs/apps.md) as Herald sends them, and as the emulator's APNs checks them.
@Suite struct LiveActivityRequestTests {
    static func live(_ event: LiveActivityContent.Event, priority: Int = 10) -> PushNotification {
        let content = LiveActivityContent(
            event: event, attributes: event == .start ? .init(activityId: "a-1", name: "Fix the pump", team: "Field Ops") : nil,
            contentState: .init(status: "running", assignee: "Chidi Okafor", deadline: "2026-12-01", waitingSince: nil),
            timestamp: 1_795_000_000, staleDate: event == .end ? nil : 1_795_100_000, dismissalDate: event == .end ? 1_795_014_400 : nil,
            priority: priority)
        return PushNotification(
            token: "0bda7e0000000000000000000000000000000000000000000000000000000001",
            content: NotificationContent(
                title: "P0: Fix the pump", body: "Chidi Okafor has it", data: [:], badge: 0, sound: false, threadID: "a-1",
                liveActivity: content))
    }

    @Test func heraldsActivityKitPushesAreAcceptedWithTheirHeadersAndTopic() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let credentials = try APNsCredentials(pem: P256.Signing.PrivateKey().pemRepresentation, keyID: "KEY1234567", teamID: "TEAM123456")
            let apns = APNsProvider(credentials: credentials, endpoint: endpoints.https, http: http)
            for (event, priority) in [(LiveActivityContent.Event.start, 10), (.update, 5), (.end, 10)] {
                let outcome = try await apns.send(Self.live(event, priority: priority), topic: "com.example.herald.member")
                guard case .delivered = outcome else {
                    Issue.record("\(event): \(outcome)")
                    continue
                }
            }
            let messages = await emulator.messages()
            #expect(messages.count == 3)
            #expect(messages.allSatisfy { $0.headers["apns-topic"] == "com.example.herald.member.push-type.liveactivity" })
            #expect(messages.allSatisfy { $0.headers["apns-push-type"] == "liveactivity" && $0.headers["apns-collapse-id"] == nil })
            #expect(messages.map { $0.headers["apns-priority"] } == ["10", "5", "10"])
            #expect(messages.first?.title == "P0: Fix the pump" && messages.last?.title == nil)
        }
    }

    /// What the emulator refuses, as a raw request with a provider token of the right shape.
    @Test func malformedActivityKitPushesAreRefusedWithTheirReason() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator)
            defer { http.shutdown() }
            let credentials = try APNsCredentials(pem: P256.Signing.PrivateKey().pemRepresentation, keyID: "KEY1234567", teamID: "TEAM123456")
            let bearer = try await credentials.providerToken()
            let live = "com.example.herald.member.push-type.liveactivity"
            let good = #""timestamp": 1795000000, "content-state": {"status": "running"}"#
            let cases: [(topic: String, type: String, priority: String, aps: String, reason: String)] = [
                ("com.example.herald.member", "liveactivity", "10", #"{"event": "update", \#(good)}"#, "TopicDisallowed"),
                (live, "alert", "10", #"{"alert": {"title": "x"}}"#, "TopicDisallowed"),
                (live, "liveactivity", "1", #"{"event": "update", \#(good)}"#, "BadPriority"),
                ("t", "banner", "10", #"{"alert": {"title": "x"}}"#, "InvalidPushType"),
                (live, "liveactivity", "10", #"{"event": "pause", \#(good)}"#, "BadLiveActivityPayload: event"),
                (live, "liveactivity", "10", #"{"event": "update", "content-state": {}}"#, "BadLiveActivityPayload: timestamp"),
                (live, "liveactivity", "10", #"{"event": "update", "timestamp": true, "content-state": {}}"#, "BadLiveActivityPayload: timestamp"),
                (live, "liveactivity", "10", #"{"event": "update", "timestamp": 1795000000}"#, "BadLiveActivityPayload: update needs"),
                (
                    live, "liveactivity", "10", #"{"event": "start", \#(good), "alert": {"title": "x"}}"#,
                    "BadLiveActivityPayload: start needs attributes"
                ),
                (
                    live, "liveactivity", "10", #"{"event": "start", \#(good), "attributes-type": "A", "attributes": {}}"#,
                    "BadLiveActivityPayload: start needs an alert"
                ),
                (live, "liveactivity", "10", #"{"event": "update", \#(good), "attributes": {}}"#, "BadLiveActivityPayload: only start"),
                (live, "liveactivity", "10", #"{"event": "update", \#(good), "dismissal-date": 1}"#, "BadLiveActivityPayload: only end"),
                (
                    live, "liveactivity", "10", #"{"event": "end", "timestamp": 1795000000, "stale-date": "soon"}"#,
                    "BadLiveActivityPayload: stale-date"
                )
            ]
            for item in cases {
                let response = try await http.send(
                    HTTPRequest(
                        method: "POST", url: endpoints.https + "/3/device/0bda7e0000000000000000000000000000000000000000000000000000000001",
                        headers: [
                            ("authorization", "bearer \(bearer)"), ("apns-topic", item.topic), ("apns-push-type", item.type),
                            ("apns-priority", item.priority)
                        ],
                        body: Array(#"{"aps": \#(item.aps)}"#.utf8)))
                let reason = (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["reason"] as? String ?? ""
                #expect(response.status == 400 && reason.hasPrefix(item.reason), "\(item.aps): \(response.status) \(reason)")
            }
            #expect(await emulator.messages().isEmpty)
        }
    }
}
