import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The inbox (docs/inbox.md) on a real database, filled by the real fan-out: every activity
/// notification is an item of its recipient whatever became of its push, with the activity as
/// it stands now; only the person reads or changes it; marks are all or nothing.
@Suite struct InboxTests {
    @Test func everyActivityNotificationIsAnItemShowingTheActivityAsItIsNow() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("alice@acme.test", token: "alice-pixel", app: .manager)
            // Chidi has no device: his items are there all the same.
            let fence = try await harness.assign(to: "chidi@acme.test", name: "Fence repair")
            try await harness.act(.start, fence.id, by: "chidi@acme.test")
            try await harness.act(.complete, fence.id, by: "chidi@acme.test")
            _ = try await harness.drain()
            let (alice, chidi, root) = try await harness.store.withTenant(harness.tenant) {
                (
                    try await $0.person(email: "alice@acme.test"), try await $0.person(email: "chidi@acme.test"),
                    try await $0.person(email: "root@acme.test")
                )
            }
            let chidis = try await harness.store.withTenant(harness.tenant) { try await $0.inbox(of: chidi, filter: .init()) }
            #expect(chidis.map(\.event) == [EventKind.activityAssigned.rawValue], "\(chidis.map(\.event))")
            let assigned = try #require(chidis.first)
            #expect(assigned.activity?.status == .completionRequested && assigned.actions.isEmpty, "\(assigned)")
            #expect(assigned.title.contains("Fence repair") || assigned.body.contains("Fence repair"))

            var alices = try await harness.store.withTenant(harness.tenant) { try await $0.inbox(of: alice, filter: .init()) }
            #expect(alices.map(\.event) == [EventKind.activityCompletionRequested.rawValue, EventKind.activityStarted.rawValue])
            #expect(alices.first?.actions == [.approve, .reject], "the manager may approve now")
            // Another manager (the admin) approves: Alice's item says so, and offers nothing.
            try await harness.act(.approve, fence.id, by: root.email)
            alices = try await harness.store.withTenant(harness.tenant) { try await $0.inbox(of: alice, filter: .init()) }
            #expect(alices.first?.activity?.status == .approved && alices.first?.actions == [], "\(String(describing: alices.first))")
            // Chat stays in conversations.
            try await harness.store.withTenant(harness.tenant) { session in
                let chat = try await session.createConversation(
                    actor: "chidi@acme.test", with: ["alice@acme.test"], name: nil, photoURL: nil, team: nil)
                _ = try await session.sendMessage(actor: "chidi@acme.test", conversation: chat.id, text: "done?", clientID: nil, sentAt: nil)
            }
            _ = try await harness.drain()
            let after = try await harness.store.withTenant(harness.tenant) { try await $0.inbox(of: alice, filter: .init()) }
            #expect(after.allSatisfy { $0.event != EventKind.chatMessage.rawValue })
            let counts = try await harness.store.withTenant(harness.tenant) { try await $0.inboxCounts(of: alice.id) }
            #expect(counts.unread == 2 && counts.unseen == 2 && counts.chat == 1 && counts.badge == 3, "\(counts)")
        }
    }

    @Test func aTurnedOffEventIsNoItemAndTheBadgeCountsUnreadItemsAndChat() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-pixel", app: .member)
            let chidi = try await harness.store.withTenant(harness.tenant) { try await $0.person(email: "chidi@acme.test") }
            _ = try await harness.assign(to: "chidi@acme.test", name: "First")
            _ = try await harness.drain()
            _ = try await harness.assign(to: "chidi@acme.test", name: "Second")
            _ = try await harness.drain()
            let badges = await harness.emulator.messages().compactMap { message -> Int? in
                guard let object = try? JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any] else { return nil }
                return Self.badge(in: object)
            }
            #expect(badges == [1, 2], "each push counts the unread items with itself: \(badges)")
            let pushedIDs = await harness.emulator.messages().compactMap { Self.dataValue("notificationId", in: $0.payload) }
            let items = try await harness.store.withTenant(harness.tenant) { try await $0.inbox(of: chidi, filter: .init()) }
            #expect(Set(pushedIDs) == Set(items.map(\.id).map(\.lowercasedString)), "a push carries its notification's id")

            try await harness.store.withTenant(harness.tenant) {
                try await $0.setPreference(.activityAssigned, app: .member, mode: .off, for: chidi, by: chidi)
            }
            _ = try await harness.assign(to: "chidi@acme.test", priority: .p2, name: "Third, turned off")
            _ = try await harness.drain()
            let still = try await harness.store.withTenant(harness.tenant) { try await $0.inbox(of: chidi, filter: .init()) }
            #expect(still.count == 2, "an event the person turned off is no item")
        }
    }

    /// A change of the counts updates the person's row in place and reads the badge back in the
    /// same statement; where the row is missing, it is written.
    @Test func aChangeOfTheCountsIsReadBackAndWritesAMissingRow() async throws {
        try await DispatchHarness.with { harness in
            _ = try await harness.assign(to: "chidi@acme.test", name: "First")
            _ = try await harness.assign(to: "chidi@acme.test", name: "Second")
            _ = try await harness.drain()
            let (chidi, items) = try await harness.store.withTenant(harness.tenant) { session in
                let chidi = try await session.person(email: "chidi@acme.test")
                return (chidi, try await session.inbox(of: chidi, filter: .init()))
            }
            #expect(items.count == 2)
            let opened = try await harness.store.withTenant(harness.tenant) {
                try await $0.reportOpened(items[0].id, by: chidi.id, device: nil, action: nil)
            }
            let counts = try await harness.store.withTenant(harness.tenant) { try await $0.inboxCounts(of: chidi.id) }
            #expect(counts.unread == 1 && opened.badge == counts.badge, "\(counts), badge \(opened.badge)")

            _ = try await harness.store.withTenant(harness.tenant) { session in
                try await session.connection.query("DELETE FROM inbox_counts WHERE tenant_id = \(session.tenantID) AND person_id = \(chidi.id)")
            }
            let marked = try await harness.store.withTenant(harness.tenant) {
                try await $0.markInbox(of: chidi.id, .unread, .ids([items[0].id]), device: nil)
            }
            let rows = try await harness.store.withTenant(harness.tenant) { session in
                try await session.connection.query(
                    "SELECT unread FROM inbox_counts WHERE tenant_id = \(session.tenantID) AND person_id = \(chidi.id)"
                )
                .map { try $0.decode(Int.self) }
            }
            #expect(rows == [1], "the missing row, written with the change")
            #expect(marked.ids == [items[0].id] && marked.badge == 1)
        }
    }

    @Test func marksAreAllOrNothingAndOnlyThePersonsOwn() async throws {
        try await DispatchHarness.with { harness in
            for name in ["One", "Two", "Three"] { _ = try await harness.assign(to: "chidi@acme.test", name: name) }
            _ = try await harness.assign(to: "dana@acme.test", name: "Dana's")
            _ = try await harness.drain()
            let (chidi, dana) = try await harness.store.withTenant(harness.tenant) {
                (try await $0.person(email: "chidi@acme.test"), try await $0.person(email: "dana@acme.test"))
            }
            let items = try await harness.store.withTenant(harness.tenant) { try await $0.inbox(of: chidi, filter: .init()) }
            let danas = try await harness.store.withTenant(harness.tenant) { try await $0.inbox(of: dana, filter: .init()) }
            #expect(items.count == 3 && danas.count == 1)
            let danaItem = try #require(danas.first)

            // Dana's id among Chidi's: refused, named by its place, nothing written.
            await #expect(throws: InboxUnknownItems(unknown: [(index: 1, id: danaItem.id)])) {
                try await harness.store.withTenant(harness.tenant) {
                    try await $0.markInbox(of: chidi.id, .read, .ids([items[0].id, danaItem.id]), device: nil)
                }
            }
            #expect(try await harness.store.withTenant(harness.tenant) { try await $0.inboxCounts(of: chidi.id) }.unread == 3)
            await #expect(throws: StoreError.self) {
                try await harness.store.withTenant(harness.tenant) { try await $0.inboxItem(danaItem.id, of: chidi) }
            }

            let read = try await harness.store.withTenant(harness.tenant) {
                try await $0.markInbox(of: chidi.id, .read, .ids([items[0].id]), device: nil)
            }
            #expect(read.ids == [items[0].id] && read.status == .read && read.badge == 2)
            #expect(read.happened.first?.events == [.seen, .read])
            let again = try await harness.store.withTenant(harness.tenant) {
                try await $0.markInbox(of: chidi.id, .read, .ids([items[0].id]), device: nil)
            }
            #expect(again.isEmpty, "marking what is already so changes nothing")
            let unread = try await harness.store.withTenant(harness.tenant) { try await $0.inbox(of: chidi, filter: .init(status: .unread)) }
            #expect(unread.map(\.id) == [items[1].id, items[2].id], "newest first, the read one left out")

            // "Mark all": every item up to now, then archived ones leave the default list.
            let all = try await harness.store.withTenant(harness.tenant) {
                try await $0.markInbox(of: chidi.id, .seen, .before(Date().addingTimeInterval(1)), device: nil)
            }
            #expect(Set(all.ids) == Set([items[1].id, items[2].id]))
            _ = try await harness.store.withTenant(harness.tenant) {
                try await $0.markInbox(of: chidi.id, .archive, .ids([items[2].id]), device: nil)
            }
            let listed = try await harness.store.withTenant(harness.tenant) { try await $0.inbox(of: chidi, filter: .init()) }
            let archived = try await harness.store.withTenant(harness.tenant) { try await $0.inbox(of: chidi, filter: .init(archived: true)) }
            #expect(listed.count == 2 && archived.map(\.id) == [items[2].id])
            let counts = try await harness.store.withTenant(harness.tenant) { try await $0.inboxCounts(of: chidi.id) }
            #expect(counts.unread == 1 && counts.unseen == 0, "an archived item is not counted: \(counts)")
            // An archived item is still in history.
            let history = try await harness.history(as: "chidi@acme.test")
            #expect(history.first { $0.id == items[2].id }?.engagement.archived != nil)
        }
    }

    @Test func openingThePushIsTheRecipientsOnceAndShowsInHistory() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-pixel", app: .member)
            try await harness.register("dana@acme.test", token: "dana-pixel", app: .member)
            _ = try await harness.assign(to: "chidi@acme.test", name: "Pump seal")
            _ = try await harness.drain()
            let (chidi, dana) = try await harness.store.withTenant(harness.tenant) {
                (try await $0.person(email: "chidi@acme.test"), try await $0.person(email: "dana@acme.test"))
            }
            let item = try #require(try await harness.store.withTenant(harness.tenant) { try await $0.inbox(of: chidi, filter: .init()) }.first)
            let devices = try await harness.store.withTenant(harness.tenant) {
                (
                    try await $0.devices(viewer: AccessPolicy(nil), email: "chidi@acme.test").first?.id,
                    try await $0.devices(viewer: AccessPolicy(nil), email: "dana@acme.test").first?.id
                )
            }
            let (pixel, danaPixel) = (try #require(devices.0), try #require(devices.1))

            await #expect(throws: StoreError.self, "only its recipient reports it") {
                try await harness.store.withTenant(harness.tenant) { try await $0.reportOpened(item.id, by: dana.id, device: nil, action: nil) }
            }
            await #expect(throws: InputError.self, "from a device of theirs") {
                try await harness.store.withTenant(harness.tenant) {
                    try await $0.reportOpened(item.id, by: chidi.id, device: danaPixel, action: nil)
                }
            }
            // The app says the push arrived: history keeps it, and no socket hears of a change.
            let arrived = try await harness.store.withTenant(harness.tenant) { try await $0.reportDelivered(item.id, by: chidi.id, device: pixel) }
            #expect(arrived.ids.isEmpty && arrived.happened.first?.events == [.delivered] && arrived.badge == 1, "\(arrived)")
            let opened = try await harness.store.withTenant(harness.tenant) {
                try await $0.reportOpened(item.id, by: chidi.id, device: pixel, action: .start)
            }
            #expect(opened.happened.first?.events == [.opened, .interacted, .seen, .read] && opened.ids == [item.id] && opened.badge == 0)
            let twice = try await harness.store.withTenant(harness.tenant) {
                try await $0.reportOpened(item.id, by: chidi.id, device: pixel, action: .start)
            }
            #expect(twice.isEmpty, "reported again: nothing more")

            let entry = try #require(try await harness.history(as: "alice@acme.test").first { $0.id == item.id })
            #expect(entry.engagement.opened?.device == pixel && entry.engagement.action == "start")
            #expect(entry.engagement.timeline.map(\.event) == [.delivered, .seen, .opened, .read, .interacted])

            // The feed tells Chidi's sockets and the webhooks, no one else.
            try await harness.store.sequenceLive()
            let head = try await harness.store.liveHead()
            let rows = try await harness.store.withTenant(harness.tenant) { try await $0.liveRows(for: [chidi, dana], after: 0, through: head) }
            let changes = rows.compactMap { row -> (UUID, [UUID])? in
                if case .inboxStatus(let change) = row.payload { (row.reader, change.ids) } else { nil }
            }
            #expect(changes.map(\.0) == [chidi.id, chidi.id], "the arrival (for webhooks) and the opening, Chidi's alone")
            #expect(changes.map(\.1) == [[], [item.id]], "only the opening changed the item's status")
        }
    }

    @Test func aReadOnOneDeviceSetsTheOtherDevicesBadgesSilently() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-pixel", app: .member)
            try await harness.register("chidi@acme.test", token: "chidi-tablet", app: .member)
            try await harness.register(
                "chidi@acme.test", token: "c0ffee" + String(repeating: "0", count: 58), app: .member, platform: .ios, provider: .apns)
            // Each fanned out on its own, so the pushes carry 1, then 2 (a device that already
            // shows the new number hears nothing).
            for name in ["One", "Two"] {
                _ = try await harness.assign(to: "chidi@acme.test", name: name)
                _ = try await harness.drain()
            }
            let chidi = try await harness.store.withTenant(harness.tenant) { try await $0.person(email: "chidi@acme.test") }
            let devices = try await harness.store.withTenant(harness.tenant) { try await $0.devices(viewer: AccessPolicy(chidi), email: chidi.email) }
            let pixel = try #require(devices.first { $0.token == "chidi-pixel" }?.id)
            let items = try await harness.store.withTenant(harness.tenant) { try await $0.inbox(of: chidi, filter: .init()) }
            let before = await harness.emulator.messages().count

            // Read on the Pixel: the tablet and the iPhone hear of the new badge, the Pixel not.
            _ = try await harness.store.withTenant(harness.tenant) {
                try await $0.reportOpened(items[0].id, by: chidi.id, device: pixel, action: nil)
            }
            _ = try await harness.drain()
            let updates = await Array(harness.emulator.messages().dropFirst(before))
            #expect(Set(updates.map(\.token)) == Set(["chidi-tablet", "c0ffee" + String(repeating: "0", count: 58)]), "\(updates.map(\.token))")
            for update in updates {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(update.payload.utf8)) as? [String: Any])
                #expect(Self.badge(in: object) == 1 || Self.dataValue("badge", in: update.payload) == "1")
                if update.provider == "fcm" {
                    let message = try #require(object["message"] as? [String: Any])
                    #expect(message["notification"] == nil && (message["android"] as? [String: Any])?["notification"] == nil, "shows nothing")
                    #expect(Self.dataValue("type", in: update.payload) == "badge" && Self.dataValue("badge", in: update.payload) == "1")
                } else {
                    let aps = try #require(object["aps"] as? [String: Any])
                    #expect(aps.keys.sorted() == ["badge"] && aps["badge"] as? Int == 1 && update.headers["apns-priority"] == "5", "\(object)")
                }
            }
            // Read again at once: the next update waits its turn, a few seconds after the last.
            _ = try await harness.store.withTenant(harness.tenant) { try await $0.markInbox(of: chidi.id, .read, .ids([items[1].id]), device: pixel) }
            let spacing = try await harness.count(
                """
                SELECT count(*) FROM deliveries d JOIN notifications n ON n.tenant_id = d.tenant_id AND n.id = d.notification_id
                WHERE n.kind = 'badge' AND n.badge = 0 AND d.status = 'queued'
                  AND d.due_at >= (SELECT max(e.due_at) FROM deliveries e JOIN notifications m ON m.tenant_id = e.tenant_id AND m.id = e.notification_id
                                   WHERE m.kind = 'badge' AND m.badge = 1) + interval '4.9 seconds'
                """)
            #expect(spacing == 2, "each of the two other devices waits for its turn")
            let history = try await harness.history(as: "chidi@acme.test")
            #expect(history.contains { $0.event == "badge" && $0.status == "sent" })
        }
    }

    /// The badge a push's JSON carries, wherever its provider puts it.
    static func badge(in object: [String: Any]) -> Int? {
        if let aps = object["aps"] as? [String: Any], let badge = aps["badge"] as? Int { return badge }
        if let message = object["message"] as? [String: Any] { return badge(in: message) }
        if let android = object["android"] as? [String: Any], let notification = android["notification"] as? [String: Any],
            let count = notification["notification_count"] as? Int
        {
            return count
        }
        if let apns = object["apns"] as? [String: Any], let payload = apns["payload"] as? [String: Any] { return badge(in: payload) }
        return nil
    }

    /// A `data` value of an FCM request.
    static func dataValue(_ key: String, in payload: String) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any],
            let message = object["message"] as? [String: Any], let data = message["data"] as? [String: String]
        else { return nil }
        return data[key]
    }
}
