import Foundation
import HeraldCore
import HeraldDispatch
import HeraldStore
import HeraldTemplates

extension DemoStory {
    /// Alice's hourly digest of her team's starts (docs/notifications.md): the starts gather
    /// without a sound, and an hour later (the demo moves the clock: it closes her digest as
    /// a worker would then) one push says what happened.
    mutating func playDigest() async throws {
        _ = try await step("Alice chooses an hourly digest of her team's starts (herald prefs set activity.started digest)") { session in
            let alice = try await session.person(email: "alice@demo.test")
            try await session.setPreference(.activityStarted, app: .manager, mode: .digest, for: alice, by: alice)
        }
        var rounds: [UUID] = []
        for (email, name) in [("bob@demo.test", "North pump round"), ("carol@demo.test", "Valve check"), ("dave@demo.test", "Fence patrol")] {
            let first = email.prefix { $0 != "@" }.capitalized
            let activity = try await step("Alice assigns \(first) \"\(name)\" (P3)") { session in
                try await session.assignActivity(
                    actor: "alice@demo.test", team: "field-ops", assignee: email, name: name, deadline: Self.deadline(), priority: .p3)
            }
            rounds.append(activity.id)
            _ = try await step("\(first) starts it (gathered into Alice's digest: her phone stays quiet)") {
                try await $0.act(.start, on: activity.id, actor: email)
            }
        }
        ids.digestedActivity = rounds.first?.lowercasedString ?? ""
        let (store, later) = (store, Date().addingTimeInterval(3601))
        let deadline = dispatcher.configuration.retry.deadline
        _ = try await happen("An hour later (the demo moves the clock): a worker closes Alice's digest and pushes it once") {
            try await store.closeDueDigests(
                at: later, deadline: deadline, templates: TemplateCatalog(overrides: StoredTemplateOverrides(store: store)))
        }
    }
}
