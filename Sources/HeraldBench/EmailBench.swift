import Foundation
import HeraldCore
import HeraldEmulator
import HeraldPush
import HeraldTemplates
import Logging

/// `herald bench email` (docs/cli.md#benchmarks): what an email costs Herald's CPU, and how
/// many a second go to a local relay. The work of an email (its templates, the MIME message) is
/// timed on one thread with nothing else in between; then emails are submitted over SMTP to the
/// emulator's relay in this process (whose CPU, parsing every message, is in the process's
/// figure), on the channel's four connections.
public enum EmailBench {
    public struct Report: Encodable, Sendable {
        public let build: String
        public let emails: Int
        /// Microseconds of CPU an email, by what was timed.
        public let cpuMicrosecondsPerEmail: [String: Double]
        /// Emails a second over SMTP to the in-process relay.
        public let sentPerSecond: Double

        public var fields: [(String, String)] {
            [("scenario", "email"), ("build", build), ("emails", "\(emails)")]
                + cpuMicrosecondsPerEmail.sorted { $0.key < $1.key }.map { ("CPU an email, \($0.key) (µs)", String(format: "%.1f", $0.value)) }
                + [("sent over SMTP a second", String(format: "%.0f", sentPerSecond))]
        }
    }

    /// - Parameters:
    ///   - emails: emails composed on one thread.
    ///   - sends: emails submitted to the relay.
    public static func run(emails: Int, sends: Int, logger: Logger) async throws -> Report {
        let templates = try await TemplateCatalog().templates(for: UUID(), loading: { _ in [:] })
        let relay = try await EmulatorSMTP.start()
        defer { Task { await relay.stop() } }
        let settings = EmailSettings(
            smtp: SMTPClient.Settings(url: "smtp://127.0.0.1:\(relay.port)", allowPlain: true),
            from: EmailMessage.Mailbox(address: "herald@bench.test", name: "Herald"), appURL: "https://app.bench.test",
            publicURL: "https://herald.bench.test")
        let recipient = MailRecipient(name: "Bob Stone", locale: "en", templates: templates, unsubscribeToken: String(repeating: "t", count: 180))
        var composed: [String: Double] = [:]
        composed["templates + MIME message"] = try WebPushBench.perPush(emails) { index in
            _ = try EmailComposer.compose(notification(index), to: recipient, settings: settings, now: Date()).wire
        }
        let channel = EmailChannel(settings: settings)
        let started = ContinuousClock.now
        let cpuStart = WebPushBench.processCPU()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<16 {
                group.addTask {
                    var index = lane
                    while index < sends {
                        var push = notification(index)
                        push.mail = recipient
                        let answer = try await channel.deliver(push, app: .member, expiration: nil)
                        guard case .delivered = answer.outcome else { throw EmailBenchFailure(answer: "\(answer)") }
                        index += 16
                    }
                }
            }
            try await group.waitForAll()
        }
        let seconds = started.duration(to: .now).timeInterval
        composed["sent over SMTP, this process with the relay (which parses)"] =
            (WebPushBench.processCPU() - cpuStart) / Double(max(1, sends)) * 1_000_000
        guard relay.emails.count == sends else { throw EmailBenchFailure(answer: "the relay took \(relay.emails.count) of \(sends)") }
        #if DEBUG
            let build = "debug"
        #else
            let build = "release"
        #endif
        return Report(build: build, emails: emails, cpuMicrosecondsPerEmail: composed, sentPerSecond: Double(sends) / seconds)
    }

    /// The `index`-th email's notification: an assignment, its words as fan-out renders them.
    static func notification(_ index: Int) -> PushNotification {
        let activity = "0193a1b2-0000-7000-8000-\(String(format: "%012d", index))"
        return PushNotification(
            token: "bob@bench.test",
            content: NotificationContent(
                title: "Activity Update",
                body: "Nov 27, 2026 - Alice Moreau has assigned you a new activity with deadline Dec 4, 2026: Replace the pump seal.",
                data: ["type": "activity_assigned", "activityId": activity, "priority": "p2", "notificationId": activity], badge: 1, sound: true,
                threadID: activity))
    }
}

/// An email the relay did not take while benchmarking.
struct EmailBenchFailure: Error, CustomStringConvertible {
    let answer: String
    var description: String { "the relay did not take an email: \(answer)" }
}
