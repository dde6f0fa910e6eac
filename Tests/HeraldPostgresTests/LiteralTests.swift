import Foundation
import Testing

@testable import HeraldPostgres

@Suite struct LiteralTests {
    @Test(arguments: [
        ("{}", [String?]()),
        ("{a}", ["a"]),
        ("{a,b}", ["a", "b"]),
        ("{\"a b\",NULL,\"NULL\"}", ["a b", nil, "NULL"]),
        ("{\"q\\\"uote\",\"back\\\\slash\"}", ["q\"uote", "back\\slash"]),
        ("[0:1]={x,y}", ["x", "y"]),
        ("{\"é 中文 🔻\",  x y  ,null,\"\",NuLl}", ["é 中文 🔻", "x y", nil, "", nil])
    ])
    func arrayLiteralsParse(text: String, expected: [String?]) {
        #expect(PostgresArrayLiteral.parse(text) == expected)
    }

    @Test(arguments: ["", "a,b", "{a", "{{a},{b}}", "{\"open}"])
    func malformedArrayLiteralsAreRefused(text: String) {
        #expect(PostgresArrayLiteral.parse(text) == nil)
    }

    @Test func arrayLiteralsRoundTrip() throws {
        let values: [String?] = ["", "a,b", "{}", "\"", "\\", nil, "NULL", "x y"]
        let text = try #require(values.postgresText)
        #expect(PostgresArrayLiteral.parse(text) == values)
    }

    @Test func arraysOfEveryElementTypeSpellEachElementAsItsOwnText() throws {
        let uuids = [UUID(), UUID()]
        let dates: [Date?] = [Date(timeIntervalSince1970: 1_795_307_319.5), nil, Date(timeIntervalSince1970: 253_402_300_800)]
        let numbers: [Int?] = [0, -12, nil, Int.max]
        let flags = [true, false]
        let texts: [String?] = ["a,b", nil, "NULL", "q\"uote", ""]
        func elements<Element: PostgresArrayElement>(_ array: [Element]) throws -> [String?] {
            let text = try #require(array.postgresText)
            return try #require(PostgresArrayLiteral.parse(text))
        }
        #expect(try elements(uuids) == uuids.map(\.postgresText))
        #expect(try elements(dates) == dates.map(\.postgresText))
        #expect(try elements(numbers) == numbers.map(\.postgresText))
        #expect(try elements(flags) == ["t", "f"])
        #expect(try elements(texts) == texts)
        #expect([UUID]().postgresText == "{}")
    }

    @Test func timestampsFormatInUTCWithMicroseconds() {
        let date = Date(timeIntervalSince1970: 1_795_307_319.5)
        #expect(PostgresTimestamp.format(date) == "2026-11-22 00:28:39.500000+00")
        #expect(PostgresTimestamp.format(Date(timeIntervalSince1970: -1)) == "1969-12-31 23:59:59.000000+00")
        #expect(PostgresTimestamp.format(Date(timeIntervalSince1970: 0.000_001)) == "1970-01-01 00:00:00.000001+00")
        #expect(PostgresTimestamp.format(Date(timeIntervalSince1970: 253_402_300_799)) == "9999-12-31 23:59:59.000000+00")
        // Past the four digits of a year, the slower way writes all of them.
        #expect(PostgresTimestamp.format(Date(timeIntervalSince1970: 253_402_300_800)) == "10000-01-01 00:00:00.000000+00")
    }

    @Test(arguments: [
        ("2026-11-22 00:28:39.5+00", 1_795_307_319.5),
        ("2026-11-22 09:58:39.5+09:30", 1_795_307_319.5),
        ("2026-11-21 19:28:39.5-05", 1_795_307_319.5),
        ("2026-11-22T00:28:39Z", 1_795_307_319),
        ("2026-11-22", 1_795_305_600)
    ])
    func timestampsParse(text: String, seconds: Double) {
        #expect(PostgresTimestamp.parse(text) == Date(timeIntervalSince1970: seconds))
    }

    @Test(arguments: ["", "2026-11", "2026-11-22 25", "2026-11-22 00:00:00+x", "yesterday"])
    func malformedTimestampsAreRefused(text: String) {
        #expect(PostgresTimestamp.parse(text) == nil)
    }
}
