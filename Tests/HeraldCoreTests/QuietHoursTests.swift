import Foundation
import HeraldCore
import HeraldTesting
import Testing

struct QuietHoursTests {
    static func zone(_ name: String) throws -> TimeZone { try #require(TimeZone(identifier: name)) }

    @Test func aWindowAcrossMidnightDefersToItsEndOnTheirClock() throws {
        let hours = try QuietHours.parse("22:00-07:00")
        let tokyo = try Self.zone("Asia/Tokyo")
        // 23:30 and 06:59 in Tokyo are inside; 07:00 and 21:59 are not.
        #expect(hours.deferral(at: try instant("2026-11-23T14:30:00Z"), in: tokyo) == (try instant("2026-11-23T22:00:00Z")))
        #expect(hours.deferral(at: try instant("2026-11-23T21:59:00Z"), in: tokyo) == (try instant("2026-11-23T22:00:00Z")))
        #expect(hours.deferral(at: try instant("2026-11-23T22:00:00Z"), in: tokyo) == nil)
        #expect(hours.deferral(at: try instant("2026-11-23T12:59:00Z"), in: tokyo) == nil)
        // The same instant is daytime in New York.
        #expect(hours.deferral(at: try instant("2026-11-23T14:30:00Z"), in: try Self.zone("America/New_York")) == nil)
    }

    @Test func daysNameWhereAWindowStarts() throws {
        let weekdays = try QuietHours.parse("22:00-07:00", days: "mon-fri")
        let utc = try Self.zone("UTC")
        // Friday 23:00 starts a window (to Saturday 07:00); Saturday 23:00 does not.
        #expect(weekdays.deferral(at: try instant("2026-11-27T23:00:00Z"), in: utc) == (try instant("2026-11-28T07:00:00Z")))
        #expect(weekdays.deferral(at: try instant("2026-11-28T23:00:00Z"), in: utc) == nil)
        // Monday 03:00 belongs to Sunday's window, which there is none of.
        #expect(weekdays.deferral(at: try instant("2026-11-30T03:00:00Z"), in: utc) == nil)
        #expect(try QuietHours.parse("09:00-17:00", days: "sat,sun").description == "09:00-17:00 sat,sun")
        #expect(try QuietHours.parse("09:00-17:00", days: "fri-mon").days == [.fri, .sat, .sun, .mon])
        #expect(weekdays.description == "22:00-07:00 mon,tue,wed,thu,fri")
    }

    @Test func daylightSavingChangesAreHandled() throws {
        let berlin = try Self.zone("Europe/Berlin")
        let hours = try QuietHours.parse("22:00-07:00")
        // The night Berlin moves its clocks forward (2026-03-29): 07:00 CEST is 05:00 UTC.
        #expect(hours.deferral(at: try instant("2026-03-29T01:30:00Z"), in: berlin) == (try instant("2026-03-29T05:00:00Z")))
        // And back (2026-10-25): 07:00 CET is 06:00 UTC.
        #expect(hours.deferral(at: try instant("2026-10-25T01:30:00Z"), in: berlin) == (try instant("2026-10-25T06:00:00Z")))
    }

    @Test func badWindowsAreOneClearLine() {
        #expect(throws: InputError("quiet hours \"22-7\" are not a window such as 22:00-07:00 (or off)")) { try QuietHours.parse("22-7") }
        #expect(throws: InputError("quiet hours \"07:00-07:00\" start and end at the same time")) { try QuietHours.parse("07:00-07:00") }
        #expect(throws: InputError("days \"weekends\" are not days such as mon-fri or sat,sun")) {
            try QuietHours.parse("22:00-07:00", days: "weekends")
        }
    }

    @Test func ownSettingsWinAndP0ActivityEventsAlwaysGo() {
        let started = NotificationPreferences.Key(event: .activityStarted, app: .manager)
        let chat = NotificationPreferences.Key(event: .chatMessage, app: .member)
        let preferences = NotificationPreferences(own: [started: .off], tenant: [started: .immediate, chat: .off])
        #expect(preferences.setting(.activityStarted, app: .manager) == (.off, .own))
        #expect(preferences.setting(.chatMessage, app: .member) == (.off, .tenant))
        #expect(preferences.setting(.chatMessage, app: .manager) == (.immediate, .builtIn))
        #expect(preferences.mode(.activityStarted, app: .manager, priority: .p1) == .off)
        #expect(preferences.mode(.activityStarted, app: .manager, priority: .p0) == .immediate)
        #expect(preferences.mode(.chatMessage, app: .member, priority: nil) == .off)
        #expect(
            NotificationPreferences(entries: ["own:activity.started=manager=off", "tenant:chat.message=member=off", "junk", "own:x=member=off"])
                == NotificationPreferences(own: [started: .off], tenant: [chat: .off]))
        #expect(NotificationPreferences(entries: ["own:activity.started=manager=digest"]).own[started] == .digest)
    }

    /// The break-through rule the preferences and the quiet-hours deferral both ask.
    @Test func onlyP0ActivityEventsBreakThrough() {
        #expect(NotificationPreferences.breaksThrough(.activityAssigned, priority: .p0))
        #expect(!NotificationPreferences.breaksThrough(.activityAssigned, priority: .p1))
        #expect(!NotificationPreferences.breaksThrough(.chatMessage, priority: .p0))
        #expect(!NotificationPreferences.breaksThrough(.chatMessage, priority: nil))
    }
}
