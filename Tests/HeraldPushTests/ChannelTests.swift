import Crypto
import Foundation
import HeraldCore
import HeraldHTTP
import HeraldPush
import Logging
import Testing

/// The channels (`PushChannel`) as the gateway sees them: each configured from the
/// environment, its own start note and gate; the gateway names no provider.
struct ChannelTests {
    static let logger = Logger(label: "herald.test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func everyProviderHasOneChannelAndWebPushAloneHasNoOneEndpoint() {
        #expect(ProviderGateway.channelTypes.map { $0.provider } == PushProvider.allCases)
        #expect(ProviderGateway.gate(of: .fcm) == .oneEndpoint)
        #expect(ProviderGateway.gate(of: .apns) == .oneEndpoint)
        #expect(ProviderGateway.gate(of: .webpush) == .perDevice)
        #expect(ProviderGateway.gate(of: .email) == .oneEndpoint)
        // A push's limit is its provider's (3,993 to 4,096 bytes); an email's is the message's.
        #expect(ProviderGateway.channelTypes.filter { $0.provider != .email }.allSatisfy { $0.payloadLimit <= 4_096 && $0.payloadLimit > 3_900 })
    }

    @Test func eachChannelSaysWhatItLacksAndWebPushItsKeyAtStart() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-channels-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("webpush.pem")
        try P256.Signing.PrivateKey().pemRepresentation.write(to: key, atomically: true, encoding: .utf8)
        let http = try HTTPClient(configuration: .init(), logger: Self.logger)
        defer { http.shutdown() }
        let gateway = ProviderGateway.fromEnvironment(
            [
                "HERALD_WEBPUSH_KEY_FILE": key.path, "HERALD_WEBPUSH_SUBJECT": "mailto:ops@acme.test",
                "HERALD_APNS_KEY_FILE": folder.appendingPathComponent("missing.p8").path
            ], http: http)
        let readiness = Dictionary(uniqueKeysWithValues: gateway.readiness.map { ($0.provider, ($0.problem, $0.note)) })
        #expect(readiness[.fcm]?.0?.contains("GOOGLE_APPLICATION_CREDENTIALS") == true)
        #expect(readiness[.apns]?.0?.contains("HERALD_APNS_TOPIC_MEMBER") == true)
        #expect(readiness[.webpush]?.0 == nil)
        #expect(readiness[.webpush]?.1?.hasPrefix("pages subscribe with the public key B") == true)
        #expect(gateway.configurationError(for: .fcm) != nil && gateway.configurationError(for: .webpush) == nil)

        // A send to a channel that is not configured is a configuration error, never a throw.
        let push = PushNotification(
            token: "t", content: NotificationContent(title: "T", body: "B", data: [:], badge: 0, sound: true, threadID: "x"))
        let answer = try await gateway.send(push, provider: .fcm, app: .member, expiration: nil)
        guard case .configurationError(let reason) = answer.outcome else {
            Issue.record("\(answer)")
            return
        }
        #expect(reason.contains("FCM is not configured"))
    }
}
