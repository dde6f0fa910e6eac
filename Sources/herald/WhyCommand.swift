import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore

struct WhyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "why", abstract: "Who was told about an activity or a message, on which devices, and why not.",
        discussion: """
            One line per recipient of every event: the app, what fan-out decided (sent, muted, preference_off, \
            viewing, quiet_hours, no_device, superseded) and each device's outcome with the provider's words. Role-aware \
            like history: --as decides what you may see.
            """)

    @Option(help: "The activity's id.") var activity: String?
    @Option(help: "The chat message's id.") var message: String?
    @Option(help: "Only this recipient (email).") var user: String?
    @OptionGroup var actor: ActorOptions
    @OptionGroup var tenant: TenantOptions
    @OptionGroup var options: GlobalOptions

    func validate() throws {
        if (activity == nil) == (message == nil) { throw ValidationError("say what to explain: --activity ID or --message ID") }
    }

    func run() async throws {
        let email = try actor.email()
        let user = try user.map(Input.email)
        let events = try await withTenant(tenant) { session in
            let viewer = try await session.person(email: email)
            if let activity {
                return try await session.why(activity: try Input.id(activity, field: "activity"), viewer: viewer, recipient: user)
            }
            return try await session.why(message: try Input.id(message ?? "", field: "message"), viewer: viewer, recipient: user)
        }
        if options.json { return try printJSON(events) }
        for event in events {
            print("\(event.event) · \(event.at.shortDisplay)\(event.actor.map { " · by \($0.name) <\($0.email)>" } ?? "")")
            if let fanOut = event.fanOut { print("  " + TerminalText.escaped(Self.line(fanOut), .singleLine)) }
            if let actor = event.actor, user == nil || user == actor.email {
                print("  \(actor.email): not told — actor: it was their own action")
            }
            for detail in event.recipients { print("  " + TerminalText.escaped(Self.line(detail), .singleLine)) }
            if let queued = event.queued {
                print("  " + TerminalText.escaped(Self.line(queued), .singleLine))
            } else if event.recipients.isEmpty, event.actor?.email != user || user == nil {
                print("  " + (user.map { "\($0): not a recipient of this event" } ?? "no recipient you may see"))
            }
        }
        if events.isEmpty {
            print(message == nil ? "no events" : "no events: a system message (a join, a leave, a rename) notifies nobody")
        }
    }

    /// An event still queued: since when, and who will be considered.
    static func line(_ queued: WhyEvent.Queued) -> String {
        let people = queued.people.map(\.email).joined(separator: ", ")
        let hidden = queued.candidates - queued.people.count
        let who =
            people.isEmpty
            ? "\(queued.candidates) \(queued.candidates == 1 ? "person" : "people")"
            : people + (hidden > 0 ? " and \(hidden) more" : "")
        return "queued since \(queued.since.shortDisplay), not fanned out yet: will consider \(who)"
    }

    /// How an event's fan-out failed, and what became of it, in one line.
    static func line(_ fanOut: WhyEvent.FanOutFailures) -> String {
        let state = fanOut.passedOverAt.map { "passed over at \($0.shortDisplay)" } ?? (fanOut.pending ? "to be tried again" : "written after all")
        return "fan-out failed \(fanOut.failures == 1 ? "once" : "\(fanOut.failures) times"), \(state): \(fanOut.error)"
    }

    /// One recipient in one line: who, which app, the decision, and each device's outcome.
    static func line(_ detail: HistoryDetail) -> String {
        let entry = detail.notification
        let who = "\(entry.recipient.email) (\(entry.app.rawValue) app)"
        let devices = detail.deliveries.map { delivery -> String in
            let last = delivery.attempts.last
            let answer = [last?.httpStatus.map(String.init), last?.providerError ?? delivery.lastError].compactMap { $0 }.joined(separator: " ")
            return
                "\(delivery.platform) \(delivery.address == "fid" ? "fid " : "")\(delivery.tokenPreview): \(delivery.status)\(answer.isEmpty ? "" : " (\(answer))")"
        }.joined(separator: "; ")
        let outcome: String
        switch entry.decision {
        case .muted?: outcome = "\(entry.status) silently — muted"
        case .preferenceOff?, .viewing?, .superseded?, .noDevice?: outcome = "not sent — \(entry.reason ?? entry.decision?.rawValue ?? "")"
        case .quietHours?:
            outcome = "\(entry.status) — \(entry.reason ?? "quiet hours")"
        case .digest?:
            let digest = entry.digestID.map { " (digest \($0.lowercasedString))" } ?? ""
            outcome = "\(entry.status) — \(entry.reason ?? "gathered into a digest")\(digest)"
        case .send?, nil:
            // (A notification sent says why only when it took another way: by email.)
            outcome = entry.status + (entry.reason.map { " — \($0)" } ?? "")
        }
        return "\(who): \(outcome)\(devices.isEmpty ? "" : " · \(devices)")\(engagement(detail))"
    }

    /// What the recipient did with it, after the delivery: ` · opened 09:05 on android …ab12 ·
    /// approve from the push` (docs/inbox.md).
    static func engagement(_ detail: HistoryDetail) -> String {
        detail.notification.engagement.timeline.map { step in
            " · \(step.phrase) \(step.at.shortDisplay)" + (step.device.map { " on \(detail.deviceName($0))" } ?? "")
        }.joined()
    }
}
