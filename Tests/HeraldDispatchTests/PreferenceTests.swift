import Foundation
import HeraldCore
import HeraldDispatch
import HeraldEmulator
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// Preferences and quiet hours at fan-out (docs/notifications.md), through a real dispatcher and the
/// emulator: what is off is not pushed and says so; what falls in quiet hours waits for
/// their end; P0 breaks through, time-sensitive.
@Suite struct PreferenceTests {
    func person(_ harness: DispatchHarness, _ email: String) async throws -> Person {
        try await harness.store.withTenant(harness.tenant) { try await $0.person(email: email) }
    }

    @Test func anEventSwitchedOffIsNotPushedButP0Is() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("alice@acme.test", token: "alice-manager", app: .manager)
            let alice = try await person(harness, "alice@acme.test")
            try await harness.store.withTenant(harness.tenant) {
                try await $0.setPreference(.activityStarted, app: .manager, mode: .off, for: alice, by: alice)
            }
            let quiet = try await harness.assign(priority: .p2, name: "Quiet one")
            try await harness.act(.start, quiet.id, by: "chidi@acme.test")
            let urgent = try await harness.assign(priority: .p0, name: "Urgent one")
            try await harness.act(.start, urgent.id, by: "chidi@acme.test")
            _ = try await harness.drain(horizon: .seconds(1))
            let messages = await harness.emulator.messages()
            #expect(messages.count == 1 && messages.first?.body?.contains("Urgent one") == true, "\(messages.map { $0.body ?? "" })")
            let started = try await harness.history().filter { $0.event == "activity.started" }
            let off = try #require(started.first { $0.activityID == quiet.id })
            #expect(off.status == "suppressed" && off.decision == .preferenceOff && off.devices == 0)
            #expect(off.reason == "preference_off: they turned activity.started off on the manager app")
            let pushed = try #require(started.first { $0.activityID == urgent.id })
            #expect(pushed.status == "sent" && pushed.decision == .send)

            // A tenant default applies to those who set nothing; their own setting wins.
            let ada = try await person(harness, "root@acme.test")
            try await harness.store.withTenant(harness.tenant) { session in
                try await session.setPreference(.activityStarted, app: nil, mode: .immediate, for: nil, by: ada)
                try await session.setPreference(.activityAssigned, app: nil, mode: .off, for: nil, by: ada)
                let chidi = try await session.preferences(for: try await session.person(email: "chidi@acme.test"))
                let assigned = try #require(chidi.entries.first { $0.event == .activityAssigned })
                #expect(assigned.mode == .off && assigned.origin == .tenant)
                let own = try await session.preferences(for: alice)
                let started = try #require(own.entries.first { $0.event == .activityStarted })
                #expect(started.mode == .off && started.origin == .own)
            }
        }
    }

    /// Chidi (Tokyo) is in quiet hours that end in under a minute: a P2 assignment waits
    /// for their end, a P0 one arrives at once and time-sensitive.
    @Test func quietHoursDeferAndP0BreaksThrough() async throws {
        try await DispatchHarness.with { harness in
            let iPhone = "c0ffee00000000000000000000000000000000000000000000000000000000bb"
            try await harness.register("chidi@acme.test", token: iPhone, app: .member, platform: .ios, provider: .apns)
            // The window: from an hour ago to the next full minute at least 10 s away, on his clock.
            let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = tokyo
            let now = Date()
            let minute = calendar.dateInterval(of: .minute, for: now)?.end ?? now
            let end = minute.timeIntervalSince(now) < 20 ? minute.addingTimeInterval(60) : minute
            func clock(_ instant: Date) -> String {
                let parts = calendar.dateComponents([.hour, .minute], from: instant)
                return String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
            }
            let window = "\(clock(now.addingTimeInterval(-3600)))-\(clock(end))"
            let chidi = try await person(harness, "chidi@acme.test")
            try await harness.store.withTenant(harness.tenant) { try await $0.setQuietHours(try QuietHours.parse(window), for: chidi) }

            let later = try await harness.assign(priority: .p2, name: "Later")
            let now0 = try await harness.assign(priority: .p0, name: "Right now")
            // Five messages in a group while he is quiet: one summary push when the window ends.
            try await harness.register("chidi@acme.test", token: "chidi-pixel", app: .member)
            try await harness.store.withTenant(harness.tenant) { session in
                let group = try await session.createConversation(
                    actor: "alice@acme.test", with: ["chidi@acme.test", "dana@acme.test"], name: "Site Team", photoURL: nil, team: nil)
                for index in 1...5 {
                    _ = try await session.sendMessage(
                        actor: "alice@acme.test", conversation: group.id, text: "Update \(index)", clientID: "c\(index)", sentAt: nil)
                }
            }
            _ = try await harness.drain(horizon: .seconds(1))
            var messages = await harness.emulator.messages()
            // (On a loaded machine the window may have ended by now: what is checked below holds either way.)
            let urgent = try #require(messages.first { $0.token == iPhone && $0.body?.contains("Right now") == true })
            #expect(messages.allSatisfy { $0.body?.contains("Later") != true || $0.receivedAt >= end })
            let aps = (try JSONSerialization.jsonObject(with: Data(urgent.payload.utf8)) as? [String: Any])?["aps"] as? [String: Any]
            #expect(aps?["interruption-level"] as? String == "time-sensitive")

            let history = try await harness.history()
            let waiting = try #require(history.first { $0.activityID == later.id })
            #expect(waiting.decision == .quietHours)
            if Date() < end.addingTimeInterval(-1) { #expect(waiting.status == "pending") }
            #expect(waiting.reason == "quiet_hours: deferred until \(DateFormatter.tokyo.string(from: end)) (Asia/Tokyo)", "\(waiting.reason ?? "")")
            #expect(waiting.deferredUntil.map { abs($0.timeIntervalSince(end)) < 1 } == true)
            #expect(history.first { $0.activityID == now0.id }?.decision == .send)
            let chats = history.filter { $0.event == "chat.message" && $0.recipient.email == "chidi@acme.test" }
            #expect(chats.count == 5 && chats.allSatisfy { $0.decision == .quietHours })

            // A worker sends it when the window ends, not before.
            try await harness.withDispatcher { dispatcher in
                let running = Task { try await dispatcher.run(.forever) }
                defer { running.cancel() }
                let deadline = end.addingTimeInterval(30)
                while await harness.emulator.messages().count < 5, Date() < deadline { try await Task.sleep(for: .milliseconds(200)) }
                // Anything more would come within a moment.
                try await Task.sleep(for: .seconds(1))
                dispatcher.shutdown()
                _ = try await running.value
            }
            messages = await harness.emulator.messages()
            let deferred = try #require(messages.first { $0.token == iPhone && $0.body?.contains("Later") == true })
            #expect(deferred.receivedAt >= end, "sent \(end.timeIntervalSince(deferred.receivedAt)) s before the quiet hours ended")
            let aps2 = (try JSONSerialization.jsonObject(with: Data(deferred.payload.utf8)) as? [String: Any])?["aps"] as? [String: Any]
            #expect(aps2?["interruption-level"] == nil)
            let pixel = messages.filter { $0.token == "chidi-pixel" }
            // The assignment went to both his phones; of the five chat messages one summary.
            let summaries = pixel.filter { $0.title == "Site Team" }
            #expect(summaries.map(\.body) == ["5 new messages in Site Team"], "\(pixel.map { ($0.title ?? "", $0.body ?? "") })")
            #expect(summaries.allSatisfy { $0.receivedAt >= end })
            let summarized = try await harness.history().filter { $0.event == "chat.message" && $0.recipient.email == "chidi@acme.test" }
            #expect(summarized.filter { $0.status == "cancelled" }.count == 4 && summarized.filter { $0.status == "sent" }.count == 1)
            // Dana has no quiet hours: each of her five arrived (she has no device: no_device).
            #expect(try await harness.history().filter { $0.recipient.email == "dana@acme.test" }.allSatisfy { $0.decision == .noDevice })
        }
    }
}

extension DateFormatter {
    /// `2026-11-24 07:00` in Tokyo.
    static var tokyo: DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "Asia/Tokyo")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter
    }
}
