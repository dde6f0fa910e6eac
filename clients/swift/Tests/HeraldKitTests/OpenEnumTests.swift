import Foundation
import Testing

@testable import HeraldKit

/// The sets the protocol closes today, as enums: known values to switch over, and a newer
/// server's values kept as they came.
struct OpenEnumTests {
    @Test func knownValuesDecodeToTheirCasesAndNewOnesAreKeptAsTheyCame() throws {
        let json = """
            {"id":"0193a0b2-7c3e-7000-8000-000000000001","owner":{"id":"0193a0b2-7c3e-7000-8000-000000000002","email":"bob@acme.test","name":"Bob"},
             "kind":"liveactivity_update","address":"token","app":"manager","platform":"visionos","provider":"fcm","state":"quarantined"}
            """
        let device = try JSONCoding.decoder.decode(Device.self, from: Data(json.utf8))
        #expect(device.kind == .liveActivityUpdate && device.app == .manager && device.provider == .fcm)
        #expect(device.platform == .unknown("visionos") && !device.platform.isKnown)
        #expect(device.state == .unknown("quarantined"))
        // Written back as it came.
        let again = try JSONSerialization.jsonObject(with: try JSONCoding.encoder.encode(device)) as? [String: Any]
        #expect(again?["platform"] as? String == "visionos" && again?["kind"] as? String == "liveactivity_update")
        #expect(EventKind(rawValue: "activity.unopened") == .activityUnopened && EventKind.known.count == 11)
        #expect(Priority(rawValue: "p9") == .unknown("p9") && Priority.p0.rawValue == "p0")
        let literal: Platform = "android"
        #expect(literal == .android && Activity.Status(rawValue: "completion_requested") == .completionRequested)
    }

    @Test func historyKeepsAStatusAndAnEventItDoesNotKnowAndAWebhookSecretReadsFlat() throws {
        let json = """
            {"id":"0193a0b2-7c3e-7000-8000-000000000001","event":"digest","eventId":"0193a0b2-7c3e-7000-8000-000000000003",
             "recipient":{"id":"0193a0b2-7c3e-7000-8000-000000000002","email":"bob@acme.test","name":"Bob"},"app":"member",
             "title":"t","body":"b","status":"bounced","devices":0,"devicesSent":0,"eventAt":"2026-11-29T08:00:00Z",
             "createdAt":"2026-11-29T08:00:00.123Z","wordsWithheld":false,"engagement":{}}
            """
        let entry = try JSONCoding.decoder.decode(HistoryEntry.self, from: Data(json.utf8))
        #expect(entry.status == .unknown("bounced") && entry.event == .unknown("digest") && entry.activityId == nil)
        #expect(NotificationStatus(rawValue: "no_device") == .noDevice && TeamRole(rawValue: "manager") == .manager)

        let hook = """
            {"id":"0193a0b2-7c3e-7000-8000-000000000004","url":"https://h.test","events":["activity.*"],"state":"active",
             "createdAt":"2026-11-29T08:00:00Z","updatedAt":"2026-11-29T08:00:00Z","secret":"whsec_c2VjcmV0"}
            """
        let secret = try JSONCoding.decoder.decode(WebhookSecret.self, from: Data(hook.utf8))
        #expect(secret.secret == "whsec_c2VjcmV0" && secret.endpoint.events == ["activity.*"] && secret.endpoint.description == nil)
        let again = try JSONSerialization.jsonObject(with: try JSONCoding.encoder.encode(secret)) as? [String: Any]
        #expect(again?["secret"] as? String == "whsec_c2VjcmV0" && again?["url"] as? String == "https://h.test")
    }

    @Test func aTransportFailureKeepsWhatTheTransportThrew() {
        struct Refused: Error {}
        let failure = HeraldError.transport(TransportFailure("127.0.0.1:1: refused", underlying: Refused()))
        guard case .transport(let why) = failure else {
            Issue.record("\(failure)")
            return
        }
        #expect(why.underlying is Refused && failure.description == "could not reach Herald: 127.0.0.1:1: refused")
        #expect(failure == .transport("127.0.0.1:1: refused") && failure.isTransient)
    }
}
