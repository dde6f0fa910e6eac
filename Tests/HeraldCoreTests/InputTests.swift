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
        ("bad \u{FFFD} bytes", "not valid UTF-8"),
    ])
    func badNamesAreRefused(name: String, message: String) {
        let error = #expect(throws: InputError.self) { try Input.name(name) }
        #expect(error?.description.contains(message) == true, "\(error?.description ?? "")")
    }

    /// Impossible days and times are refused, not rolled over into the next month or day.
    @Test func timestampsAreRealInstants() throws {
        #expect(try Input.timestamp("2026-11-22T09:30:00Z", field: "--sent-at") == Date(timeIntervalSince1970: 1_795_339_800))
        #expect(try Input.timestamp("2026-11-22T10:30:00.500+01:00", field: "--sent-at") == Date(timeIntervalSince1970: 1_795_339_800.5))
        for bad in ["2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T09:60:00Z", "2026-11-22",
                    "2026-11-22 09:30:00Z", "yesterday", ""] {
            let error = #expect(throws: InputError.self) { try Input.timestamp(bad, field: "--sent-at") }
            #expect(error?.description.hasPrefix("--sent-at") == true, "\(bad)")
        }
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
    }

    @Test(arguments: ["", "alice", "alice@", "@example.com", "a@b", "a b@example.com", "a@exa mple.com", "a@@example.com", "a@.example.com", "a@example..com"])
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
        let a = try #require(LocalDate("2026-11-28")), b = try #require(LocalDate("2026-12-01"))
        #expect(a < b)
        let data = try JSONEncoder().encode([a])
        #expect(String(decoding: data, as: UTF8.self) == "[\"2026-11-28\"]")
        #expect(try JSONDecoder().decode([LocalDate].self, from: data) == [a])
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
