import Foundation
import HeraldCore
import Testing

@Suite struct InputTests {
    @Test func namesAreTrimmedAndKeptAsTyped() throws {
        #expect(try Input.name("  Tom & Jerry <3  ") == "Tom & Jerry <3")
        #expect(try Input.name("Zoë 👩🏽‍💻") == "Zoë 👩🏽‍💻")
        #expect(try Input.name(String(repeating: "é", count: 200)).count == 200)
    }

    @Test(arguments: [
        ("", "must not be empty"),
        ("   ", "must not be empty"),
        (String(repeating: "a", count: 201), "the limit is 200"),
        (String(repeating: "a", count: 10_000), "10000 characters"),
        ("tab\there", "control character"),
        ("bell\u{7}", "control character"),
        ("line\nbreak", "control character"),
        ("bad \u{FFFD} bytes", "not valid UTF-8")
    ])
    func badNamesAreRefused(name: String, message: String) {
        let error = #expect(throws: InputError.self) { try Input.name(name) }
        #expect(error?.description.contains(message) == true, "\(error?.description ?? "")")
    }

    /// Impossible days and times are refused, not rolled over into the next month or day.
    @Test func timestampsAreRealInstants() throws {
        #expect(try Input.timestamp("2026-11-22T09:30:00Z", field: "--sent-at") == Date(timeIntervalSince1970: 1_795_339_800))
        #expect(try Input.timestamp("2026-11-22T10:30:00.500+01:00", field: "--sent-at") == Date(timeIntervalSince1970: 1_795_339_800.5))
        for bad in [
            "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T09:60:00Z", "2026-11-22",
            "2026-11-22 09:30:00Z", "yesterday", ""
        ] {
            let error = #expect(throws: InputError.self) { try Input.timestamp(bad, field: "--sent-at") }
            #expect(error?.description.hasPrefix("--sent-at") == true, "\(bad)")
        }
    }

    /// Every year is read in the proleptic Gregorian calendar, as PostgreSQL stores it, not
    /// switched to the Julian calendar before October 1582 (which moved 0001-01-01 to year 0
    /// and 1582-10-10 to 1582-10-20).
    @Test func timestampsUseTheProlepticGregorianCalendar() throws {
        #expect(try Input.timestamp("0001-01-01T00:00:00Z", field: "sentAt") == Date(timeIntervalSince1970: -62_135_596_800))
        #expect(try Input.timestamp("1582-10-10T00:00:00Z", field: "sentAt") == Date(timeIntervalSince1970: -12_219_724_800))
        #expect(try Input.timestamp("1970-01-01T00:00:00Z", field: "sentAt") == Date(timeIntervalSince1970: 0))
        #expect(try Input.timestamp("2000-02-29T23:59:59.25-00:30", field: "sentAt") == Date(timeIntervalSince1970: 951_868_799.25 + 1_800))
        #expect(throws: InputError.self) { try Input.timestamp("0000-12-31T00:00:00Z", field: "sentAt") }
    }

    /// An offset is `Z` or `±HH:MM` with hours under 24 and minutes under 60 (RFC 3339); a
    /// parser that wraps `+25:00` to one hour stores the message at the wrong time.
    @Test func timestampOffsetsOutOfRangeAreRefused() throws {
        #expect(try Input.timestamp("2026-11-22T09:30:00+23:59", field: "sentAt") == Date(timeIntervalSince1970: 1_795_339_800 - 86_340))
        for bad in [
            "2026-11-22T09:30:00+25:00", "2026-11-22T09:30:00+99:99", "2026-11-22T09:30:00+12:60", "2026-11-22T09:30:00+0100",
            "2026-11-22T09:30:00", "2026-11-22T09:30:00Zjunk", "2026-11-22T09:30:00.Z", "2026-11-22T09:30:00.1234567890Z"
        ] {
            #expect(throws: InputError.self, "\(bad)") { try Input.timestamp(bad, field: "sentAt") }
        }
    }

    /// Lengths count Unicode scalars, as the database does: one letter carrying 250
    /// combining marks is one `Character` but 251 code points.
    @Test func lengthsCountCodePoints() throws {
        let marked = "a" + String(repeating: "\u{301}", count: 250)
        #expect(marked.count == 1)
        #expect(throws: InputError.self) { try Input.name(marked) }
        #expect(throws: InputError.self) { try Input.text("a" + String(repeating: "\u{301}", count: 20_000), field: "reason") }
        let longest = "a" + String(repeating: "\u{301}", count: 199)
        #expect(try Input.name(longest) == longest)
        let error = #expect(throws: InputError.self) { try Input.name(String(repeating: "\u{301}", count: 20_000) + "x") }
        #expect((error?.description.unicodeScalars.count ?? .max) < 200, "the error echoes no 40 KB")
    }

    /// APNs tokens are hexadecimal; FCM tokens are opaque.
    @Test func apnsTokensAreHex() throws {
        let iphone = String(repeating: "a1B2", count: 16)
        #expect(try Input.token(iphone, provider: .apns) == iphone.lowercased())
        #expect(try Input.token("dGhpcy1pcy1mY206QVBBOTFi", provider: .fcm) == "dGhpcy1pcy1mY206QVBBOTFi")
        for bad in ["../../../v1/projects/x/messages:send?x=#", "a1b2c3", String(repeating: "g", count: 64), String(repeating: "a", count: 63)] {
            #expect(throws: InputError.self) { try Input.token(bad, provider: .apns) }
        }
    }

    @Test func emailsAreLowercased() throws {
        #expect(try Input.email("Alice.Moreau+ops@Example.COM") == "alice.moreau+ops@example.com")
        // The limits themselves: 64 before the @, 254 in all.
        let longest = String(repeating: "a", count: 64) + "@" + String(repeating: "b", count: 185) + ".com"
        #expect(longest.unicodeScalars.count == 254 && (try? Input.email(longest)) == longest)
    }

    /// An address is trimmed of spaces and tabs at its ends as Foundation's `.whitespaces`
    /// trims them (every scalar of the Basic Multilingual Plane compared), never of a newline,
    /// and never inside.
    @Test func emailsAreTrimmedOfSpacesAsFoundationTrimsThem() throws {
        #expect(try Input.email(" \tBob@Example.com\u{00A0}\u{3000}") == "bob@example.com")
        #expect(throws: InputError.self) { try Input.email("bob@example.com\n") }
        for value in ["", " ", "\t\t", "a", " a ", "\u{2003}a b\u{2009}", "\na\n", "e\u{301} ", " \u{301}", "\u{1F600}\u{00A0}", "a\u{200B}"] {
            #expect(Input.trimmingSpaces(value) == value.trimmingCharacters(in: .whitespaces), "\(value.unicodeScalars.map(\.value))")
        }
        let differing = (0...0xFFFF).compactMap(Unicode.Scalar.init).filter { scalar in
            let value = "\(scalar)a\(scalar)"
            return Input.trimmingSpaces(value) != value.trimmingCharacters(in: .whitespaces)
        }
        #expect(differing.isEmpty, "\(differing.map { String($0.value, radix: 16) })")
    }

    @Test(arguments: [
        "", "alice", "alice@", "@example.com", "a@b", "a b@example.com", "a@exa mple.com", "a@@example.com", "a@.example.com", "a@example..com",
        "a@example.com.", "é@example.com", "e\u{301}@example.com", "a@exämple.com", "a@example.com\u{301}",
        String(repeating: "a", count: 65) + "@example.com",
        "a@" + String(repeating: "b", count: 249) + ".com"
    ])
    func badEmailsAreRefused(email: String) {
        #expect(throws: InputError.self) { try Input.email(email) }
    }

    @Test func prioritiesDatesZonesAndLocales() throws {
        #expect(try Input.priority("P0") == .p0)
        #expect(throws: InputError.self) { try Input.priority("p4") }
        #expect(try Input.date("2028-02-29").description == "2028-02-29")
        for bad in ["2026-02-30", "2026-13-01", "2026-2-1", "26-02-01", "2026-02-01x", "tomorrow", "2027-02-29"] {
            #expect(throws: InputError.self, "\(bad)") { try Input.date(bad) }
        }
        #expect(try Input.timeZone("Asia/Tokyo") == "Asia/Tokyo")
        #expect(try Input.timeZone("UTC") == "UTC")
        #expect(throws: InputError.self) { try Input.timeZone("Mars/Olympus") }
        #expect(try Input.locale("pt-BR") == "pt-BR")
        #expect(throws: InputError.self) { try Input.locale("english") }
    }

    @Test func slugsAndTokens() throws {
        #expect(try Input.slug("field-ops-2", field: "team") == "field-ops-2")
        for bad in ["", "-ops", "Ops", "ops team", String(repeating: "a", count: 64)] {
            #expect(throws: InputError.self) { try Input.slug(bad, field: "team") }
        }
        #expect(throws: InputError.self) { try Input.token("has space") }
        #expect(throws: InputError.self) { try Input.token(String(repeating: "a", count: 4097)) }
        #expect(try Input.token("fcm:APA91b-x_y") == "fcm:APA91b-x_y")
    }

    @Test func tokensAreNeverShownWhole() {
        let token = "dGhpcyBpcyBhIHZlcnkgbG9uZyB0b2tlbg9a8b"
        let shown = TokenDisplay.truncated(token)
        #expect(shown == "dGhpcy…9a8b")
        #expect(!TokenDisplay.truncated("short").contains("short"))
    }

    @Test func errorsEchoInputSafely() {
        let error = #expect(throws: InputError.self) { try Input.email("evil\u{1b}[31m@x") }
        #expect(error?.description.contains("\u{1b}") == false)
    }
}

@Suite struct IdentifierTests {
    @Test func v7IdsAreTimeOrderedAndCarryTheirVersion() {
        let earlier = UUID.v7(at: Date(timeIntervalSince1970: 1_795_307_319))
        let later = UUID.v7(at: Date(timeIntervalSince1970: 1_795_307_320))
        #expect(earlier.uuidString < later.uuidString)
        let text = earlier.uuidString
        #expect(Array(text)[14] == "7")
        #expect("89AB".contains(Array(text)[19]))
        #expect(text.hasPrefix(String(format: "%08X", UInt32(1_795_307_319_000 >> 16))))
    }

    @Test func localDatesOrderAndRoundTrip() throws {
        let a = try #require(LocalDate("2026-11-28"))
        let b = try #require(LocalDate("2026-12-01"))
        #expect(a < b)
        let data = try JSONEncoder().encode([a])
        #expect(String(decoding: data, as: UTF8.self) == "[\"2026-11-28\"]")
        #expect(try JSONDecoder().decode([LocalDate].self, from: data) == [a])
        #expect(LocalDate("0001-01-01")?.description == "0001-01-01")
        #expect(LocalDate("2024-02-29")?.description == "2024-02-29")
        #expect(LocalDate("9999-12-31")?.description == "9999-12-31")
    }

    @Test(arguments: [
        "", "2026-2-03", "2026-02-3", "2026-02-30", "2025-02-29", "0000-01-01", "2026-13-01", "2026-00-10", "2026/02/03",
        "+026-02-03", "2026-0a-03", "２０２６-02-03", "2026-02-03 ", "20260-02-03", "2026-02-03T00:00:00Z", "2026-\u{301}2-03"
    ])
    func datesThatAreNotStrictDaysAreRefused(text: String) {
        #expect(LocalDate(text) == nil)
    }
}

@Suite struct DurationInputTests {
    @Test(arguments: [("90s", 90_000), ("15m", 900_000), ("2h", 7_200_000), ("7d", 604_800_000), ("500ms", 500), ("30", 30_000)])
    func durations(text: String, milliseconds: Int64) throws {
        #expect(try Input.duration(text, field: "since") == .milliseconds(milliseconds))
    }

    @Test(arguments: ["", "h", "-5m", "1.5h", "5 parsecs", "99999999999999999999d", "１h"])
    func badDurations(text: String) {
        #expect(throws: InputError.self) { try Input.duration(text, field: "since") }
    }
}

@Suite struct PageCursorTests {
    @Test func aCursorRoundTrips() throws {
        let cursor = PageCursor(at: Date(timeIntervalSince1970: 1_795_339_800.123456), id: UUID())
        #expect(PageCursor(token: cursor.token) == cursor)
        // Every padding length, and `+` and `/` in the base64: the token is base64url without
        // padding, as Foundation's base64 with the characters replaced spells it.
        for micros in [0, 7, 1_795_339_800_123_456, -62_135_596_800_000_000, 99, 123_456_789_012] as [Int64] {
            for _ in 0..<40 {
                let cursor = PageCursor(at: Date(timeIntervalSince1970: Double(micros) / 1_000_000), id: UUID())
                let expected = Data("\(micros) \(cursor.id.uuidString.lowercased())".utf8).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
                #expect(cursor.token == expected)
                #expect(PageCursor(token: cursor.token) == cursor)
            }
        }
        #expect(PageCursor(token: "a+b/") == nil)
    }

    /// A forged cursor at or before year 0 (or at `Int64.min`) is no cursor: PostgreSQL
    /// refuses such times, and the API answered 500.
    @Test func cursorsOutsideTheYearsHeraldWritesAreRefused() {
        let id = UUID().uuidString.lowercased()
        func token(_ micros: String) -> String {
            Data("\(micros) \(id)".utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        #expect(PageCursor(token: token("-62135596800000000")) != nil)
        for micros in ["-62135596800000001", "-62167219200000000", "\(Int64.min)", "\(Int64.max)"] {
            #expect(PageCursor(token: token(micros)) == nil, "\(micros)")
        }
    }
}

@Suite struct CivilCalendarTests {
    @Test func daysRoundTripAcrossTheGregorianReform() {
        for (year, month, day, days) in [
            (1970, 1, 1, 0), (1582, 10, 10, -141_432), (1, 1, 1, -719_162), (2000, 2, 29, 11_016), (9999, 12, 31, 2_932_896)
        ] {
            #expect(CivilCalendar.days(year: Int64(year), month: Int64(month), day: Int64(day)) == Int64(days))
            #expect(CivilCalendar.date(fromDays: Int64(days)) == (Int64(year), Int64(month), Int64(day)))
        }
    }

    @Test func instantsAreWrittenAsRFC3339InEveryYear() {
        #expect(CivilCalendar.iso8601(Date(timeIntervalSince1970: 1_795_339_800.75)) == "2026-11-22T09:30:00Z")
        #expect(CivilCalendar.iso8601(Date(timeIntervalSince1970: -62_135_596_800)) == "0001-01-01T00:00:00Z")
        #expect(CivilCalendar.iso8601(Date(timeIntervalSince1970: -12_219_724_800 + 43_200)) == "1582-10-10T12:00:00Z")
        #expect(CivilCalendar.iso8601(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59Z")
        #expect(CivilCalendar.iso8601(Date(timeIntervalSince1970: 253_402_300_799)) == "9999-12-31T23:59:59Z")
        #expect(CivilCalendar.iso8601(Date(timeIntervalSince1970: 253_402_300_800)) == "10000-01-01T00:00:00Z")
    }
}
