import Foundation
import HeraldCore
import Testing

/// The digest's window and what closing it decides (docs/notifications.md), on a hand-set clock.
@Suite struct DigestWindowTests {
    func instant(_ text: String) throws -> Date { try #require(ISO8601DateFormatter().date(from: text)) }
    let berlin = TimeZone(identifier: "Europe/Berlin") ?? .gmt

    @Test func windowsParseAndSayThemselves() throws {
        for text in ["1m", "5m", "15m", "1h", "4h", "daily 08:30"] {
            #expect(try DigestWindow.parse(text).description == text)
        }
        #expect(try DigestWindow.parse(" 1H ") == .minutes(60))
        for bad in ["", "2h", "daily", "daily 8:30", "daily 24:00", "1h daily", "60m"] {
            #expect(throws: InputError.self) { try DigestWindow.parse(bad) }
        }
        #expect(DigestWindow.default == .minutes(60))
    }

    @Test func aWindowEndsItsLengthAfterItOpensOrAtTheNextDailyTime() throws {
        let opened = try instant("2026-11-27T09:10:00Z")
        #expect(DigestWindow.minutes(15).closes(openedAt: opened, in: berlin) == (try instant("2026-11-27T09:25:00Z")))
        // 10:10 in Berlin: today's 18:00 is still ahead; tomorrow's 08:00 is the next one.
        let evening = try DigestWindow.parse("daily 18:00")
        #expect(evening.closes(openedAt: opened, in: berlin) == (try instant("2026-11-27T17:00:00Z")))
        #expect(try DigestWindow.parse("daily 08:00").closes(openedAt: opened, in: berlin) == (try instant("2026-11-28T07:00:00Z")))
        // Across the change to summer time (29 March 2026 in Berlin): 08:00 is 06:00 UTC after it.
        let before = try instant("2026-03-28T20:00:00Z")
        #expect(try DigestWindow.parse("daily 08:00").closes(openedAt: before, in: berlin) == (try instant("2026-03-29T06:00:00Z")))
    }

    @Test func closingKeepsWhatIsStillNewsAndWaitsOutQuietHours() throws {
        let items = [DigestPlan.Item(), DigestPlan.Item(supersededBy: "activity.approved"), DigestPlan.Item(read: true), DigestPlan.Item()]
        let noon = try instant("2026-11-27T11:00:00Z")
        let plan = DigestPlan.close(items, quietHours: nil, timeZone: "Europe/Berlin", now: noon)
        #expect(plan.outcome == .send(kept: [0, 3]))
        #expect(plan.leaving.map(\.index) == [1, 2])
        #expect(
            plan.leaving.map(\.reason) == [
                "digest: left the digest before it was sent: superseded by activity.approved",
                "digest: left the digest before it was sent: they read the message"
            ])
        #expect(DigestPlan.close([DigestPlan.Item(read: true)], quietHours: nil, timeZone: "UTC", now: noon).outcome == .empty)
        // 23:00 in Berlin, quiet 22:00-07:00: it waits until 07:00, and nothing leaves yet.
        let night = try instant("2026-11-27T22:00:00Z")
        let waiting = DigestPlan.close(items, quietHours: try QuietHours.parse("22:00-07:00"), timeZone: "Europe/Berlin", now: night)
        #expect(
            waiting.outcome == .wait(until: try instant("2026-11-28T06:00:00Z"), reason: "quiet_hours: waits until 2026-11-28 07:00 (Europe/Berlin)"))
        #expect(waiting.leaving.isEmpty)
        #expect(
            DigestPlan.sentReason(at: noon, others: 6, timeZone: "Europe/Berlin")
                == "digest: in the digest sent at 12:00 (Europe/Berlin) with 6 others")
    }

    @Test func modesParseAsPeopleWriteThem() throws {
        #expect(try PushMode.parse("on", field: "x") == .immediate)
        #expect(try PushMode.parse("Digest", field: "x") == .digest)
        #expect(try PushMode.parse("off", field: "x") == .off)
        #expect(throws: InputError.self) { try PushMode.parse("later", field: "x") }
    }

    /// 48 items in Alice's open digest: two more fill it (due now), the third opens the next;
    /// Bob's first item opens his own, due when his window ends.
    @Test func aDigestTakesFiftyAndTheNextItemOpensAnother() throws {
        let now = try instant("2026-11-27T09:00:00Z")
        let later = now.addingTimeInterval(3600)
        let open = DigestFilling<String>.Digest(id: UUID(), key: "alice", items: 48, closesAt: later, isNew: false)
        var ids = [UUID(), UUID()]
        let filling = DigestFilling(
            ["alice", "alice", "alice", "bob"].map { DigestFilling.Item(key: $0, windowEnd: later) }, open: [open], now: now,
            newID: { ids.removeFirst() })
        #expect(filling.placed.map(\.id) == [open.id, open.id, filling.placed[2].id, filling.placed[3].id])
        #expect(filling.placed[1].items == 50 && filling.placed[1].isDue && filling.placed[1].closesAt == now)
        #expect(filling.placed[2].isNew && filling.placed[2].items == 1 && !filling.placed[2].isDue && filling.placed[2].closesAt == later)
        #expect(filling.placed[3].key == "bob" && filling.placed[3].id != filling.placed[2].id)
        #expect(filling.changed.map(\.items) == [50, 1, 1] && filling.changed.filter(\.isNew).count == 2)
    }
}
