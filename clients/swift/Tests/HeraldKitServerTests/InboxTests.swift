import Foundation
import HeraldKit
import Testing

/// The inbox through HeraldKit against the real server (docs/inbox.md in the Herald
/// repository): pages, counts, marks all or nothing, a push's opening, live changes.
@Suite struct InboxTests {
    @Test func anAppListsMarksAndOpensItsItemsAndHearsOfChanges() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        for name in ["Fence repair", "Pump seal"] {
            try await Herald.run(
                [
                    "activity", "assign", "--team", "crew", "--to", fixture.email("bob"), "--name", name, "--deadline", "2031-01-31", "--as",
                    fixture.email("alice")
                ], tenant: fixture.tenant)
        }
        let live = EventLog(LiveSession(client: fixture.client("bob", [server]), cursorStore: MemoryCursorStore()))
        await live.session.start()
        try await live.connected()
        try await Herald.run(["dispatch", "--drain"], tenant: fixture.tenant)

        let bob = fixture.client("bob", [server]).inbox
        let first = try await bob.page(limit: 1)
        let item = try #require(first.items.first)
        #expect(item.title.contains("Pump seal") || item.body.contains("Pump seal"), "newest first")
        #expect(item.actions == ["start"] && item.activity?.status == .assigned && item.isUnread)
        #expect(first.next != nil)
        #expect(try await bob.page(limit: 1, cursor: first.next).items.count == 1)
        let counts = try await bob.counts()
        #expect(counts.unseen == 2 && counts.unread == 2 && counts.chat == 0 && counts.badge == 2)

        // All or nothing: Carol's id among Bob's changes none of them.
        await #expect {
            try await bob.mark(.read, [item.id, UUID()])
        } throws: { error in
            if case HeraldError.invalid(let problem) = error { problem.errors?.first?.field == "ids[1]" } else { false }
        }
        #expect(try await bob.counts().unread == 2)

        // The tap on the push: read, the action taken, and told to the live session.
        let report = try #require(try await bob.opened(push: ["notificationId": item.id.uuidString, "aps": [:]], action: .start))
        #expect(report.events == ["opened", "interacted", "seen", "read"] && report.badge == 1)
        #expect(try await bob.opened(push: ["notificationId": item.id.uuidString], action: .start)?.events == [])
        #expect(try await bob.opened(push: ["activityId": UUID().uuidString]) == nil, "a push naming no notification")
        let status = try await live.wait(for: "the item's change") { events in
            events.lazy.compactMap { if case .inboxStatus(let change) = $0 { change } else { nil } }.first
        }
        #expect(status.ids == [item.id] && status.status == "read")
        try await live.wait(for: "the badge after it") { $0.contains(.badge(1)) ? true : nil }
        #expect(live.all.contains { if case .inboxItem(let added) = $0 { added.id == item.id } else { false } }, "added items came live")

        let all = try await bob.mark(.read, allBefore: Date().addingTimeInterval(60))
        #expect(all.ids.count == 1 && all.badge == 0)
        #expect(try await bob.page(.unread).items.isEmpty)
        #expect(try await bob.item(item.id).engagement.action == "start")
        await live.session.stop()
    }
}
