import Foundation
import HeraldCore
import HeraldTesting
import Testing

struct HistoryRetentionTests {

    @Test func aRetentionIsAtLeastTwoDaysAndTheDeadline() throws {
        let day: Duration = .seconds(86_400)
        #expect(try HistoryRetention(parsing: "90d", deliveryDeadline: day).description == "90d")
        #expect(try HistoryRetention(parsing: "48h", deliveryDeadline: day).description == "2d")
        #expect(throws: InputError.self) { try HistoryRetention(parsing: "47h", deliveryDeadline: day) }
        #expect(throws: InputError.self) { try HistoryRetention(parsing: "3d", deliveryDeadline: day * 4) }
        #expect(throws: InputError.self) { try HistoryRetention(parsing: "ninety days", deliveryDeadline: day) }
        #expect(try HistoryRetention.from(environment: [:], deliveryDeadline: day) == .default)
        #expect(try HistoryRetention.from(environment: ["HERALD_HISTORY_RETENTION": "7d"], deliveryDeadline: day).description == "7d")
        #expect(throws: InputError.self) { try HistoryRetention.from(environment: ["HERALD_HISTORY_RETENTION": "1d"], deliveryDeadline: day) }
    }

    @Test func aWeekExpiresOnceAllOfItIsOlderThanTheRetention() throws {
        let retention = try HistoryRetention(parsing: "7d", deliveryDeadline: .seconds(3600))
        let mondays = try ["2026-11-02", "2026-11-09", "2026-11-16"].map { try #require(LocalDate($0)) }
        // At Monday 23 Nov 12:00 UTC, 7 days back is 16 Nov 12:00: the week of the 9th ended
        // before it (at 16 Nov 00:00), the week of the 16th has not.
        let now = try instant("2026-11-23T12:00:00Z")
        #expect(retention.expired(mondays.reversed(), at: now) == Array(mondays.prefix(2)))
        #expect(retention.expired(mondays, at: try instant("2026-11-29T23:59:59Z")) == Array(mondays.prefix(2)))
        #expect(retention.expired(mondays, at: try instant("2026-11-30T00:00:00Z")) == mondays)
    }

    @Test func partitionsAreMadeAWeekAheadInUTC() throws {
        // 23:30 in UTC is already the 24th in Tokyo; the days are UTC days.
        let (first, last) = HistoryRetention.daysToCreate(at: try instant("2026-11-23T23:30:00Z"))
        #expect(first.description == "2026-11-23" && last.description == "2026-11-30")
    }

    @Test func anIdsFloorIsTheFirstIdOfItsMillisecond() throws {
        let at = try instant("2026-11-23T12:00:00Z").addingTimeInterval(0.1235)
        let id = UUID.v7(at: at)
        #expect(id.v7Floor == UUID.v7Floor(at: at))
        #expect(id.v7Floor.uuidString.lowercased() == "01a20846-fe7b-0000-0000-000000000000")
        #expect(id.v7Floor.uuidString < id.uuidString && id.uuidString < UUID.v7Floor(at: at.addingTimeInterval(0.001)).uuidString)
        #expect(HistoryRetention.idCeiling(at: at) == UUID.v7Floor(at: at.addingTimeInterval(2 * 86_400)))
    }

    @Test func aSiblingIdHasItsParentsMillisecondAndIsANewV7() throws {
        let parent = UUID.v7(at: try instant("2026-11-23T12:00:00Z").addingTimeInterval(0.1235))
        let siblings = (0..<100).map { _ in parent.v7Sibling() }
        #expect(Set(siblings).count == 100 && !siblings.contains(parent))
        for sibling in siblings {
            #expect(sibling.v7Floor == parent.v7Floor)
            let text = sibling.uuidString.lowercased()
            #expect(Array(text)[14] == "7" && "89ab".contains(Array(text)[19]), "\(text)")
        }
    }
}
