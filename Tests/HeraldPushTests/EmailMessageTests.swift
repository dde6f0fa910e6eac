import Foundation
import HeraldCore
import Testing

@testable import HeraldPush

/// An email as the relay gets it (docs/notifications.md#email): nothing a name or a text holds
/// adds a header, non-ASCII is encoded (RFC 2047, RFC 2045), and the parts are there.
@Suite struct EmailMessageTests {
    static func message(subject: String = "Ship v2", name: String = "Chidi Okafor", text: String = "Hello") -> EmailMessage {
        EmailMessage(
            from: .init(address: "herald@acme.test", name: "Herald"), to: .init(address: "chidi@acme.test", name: name), subject: subject,
            text: text, html: "<p>\(text)</p>", messageID: "0193-abc@acme.test", thread: "activity-0193@acme.test",
            unsubscribe: "https://herald.acme.test/v1/email/unsubscribe?token=a.b", date: Date(timeIntervalSince1970: 1_795_910_400))
    }

    /// The header block: every line until the blank one.
    static func headers(_ wire: String) -> [String] {
        wire.components(separatedBy: "\r\n\r\n")[0].components(separatedBy: "\r\n")
    }

    @Test func crAndLfInANameOrASubjectAddNoHeader() {
        let wire = Self.message(subject: "Ship\r\nBcc: victim@evil.test", name: "Chidi\r\nBcc: other@evil.test\nX-Evil: 1").wire
        let names = Self.headers(wire).filter { !$0.hasPrefix(" ") }.map { $0.prefix { $0 != ":" } }
        #expect(!names.contains("Bcc") && !names.contains("X-Evil"))
        #expect(wire.contains("Subject: Ship  Bcc: victim@evil.test\r\n"))
        #expect(wire.contains("To: \"Chidi  Bcc: other@evil.test X-Evil: 1\" <chidi@acme.test>\r\n"))
        // Every line ends in CRLF: no bare LF anywhere.
        #expect(!wire.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
    }

    @Test func nonASCIISubjectsAndNamesAreEncodedWordsOfWholeCharacters() throws {
        let subject = "Prüfung der Feuerlöscher — 🔥 " + String(repeating: "ä", count: 60)
        let wire = Self.message(subject: subject, name: "Zoë Łukasz").wire
        let lines = Self.headers(wire)
        let start = try #require(lines.firstIndex { $0.hasPrefix("Subject: ") })
        var words: [String] = [String(lines[start].dropFirst("Subject: ".count))]
        for line in lines[(start + 1)...] {
            guard line.hasPrefix(" ") else { break }
            words.append(String(line.dropFirst()))
        }
        #expect(words.count > 1 && words.allSatisfy { $0.count <= 75 && $0.hasPrefix("=?UTF-8?B?") && $0.hasSuffix("?=") })
        // Each word decodes on its own (no character split between two).
        let decoded = try words.map { word -> String in
            let data = try #require(Data(base64Encoded: String(word.dropFirst(10).dropLast(2))))
            return try #require(String(data: data, encoding: .utf8))
        }
        #expect(decoded.joined() == subject)
        #expect(wire.contains("To: =?UTF-8?B?\(Data("Zoë Łukasz".utf8).base64EncodedString())?= <chidi@acme.test>\r\n"))
    }

    @Test func theBodyIsQuotedPrintableInLinesOfAtMost76() {
        let text = "Grüße: " + String(repeating: "a long line ", count: 20) + "\nend with a space \n.leading dot"
        let wire = Self.message(text: text).wire
        let body = wire.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        #expect(body.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 76 })
        #expect(body.contains("Gr=C3=BC=C3=9Fe: a long line"))
        #expect(body.contains("end with a space=20\r\n=2Eleading dot"))
        #expect(EmailMessage.quotedPrintable("=") == "=3D")
    }

    @Test func itHasBothPartsAndTheThreadingAndUnsubscribeHeaders() {
        let wire = Self.message().wire
        let lines = Self.headers(wire)
        for header in [
            "From: \"Herald\" <herald@acme.test>", "Message-ID: <0193-abc@acme.test>", "In-Reply-To: <activity-0193@acme.test>",
            "References: <activity-0193@acme.test>", "List-Unsubscribe: <https://herald.acme.test/v1/email/unsubscribe?token=a.b>",
            "List-Unsubscribe-Post: List-Unsubscribe=One-Click", "MIME-Version: 1.0", "Date: Sun, 29 Nov 2026 00:00:00 +0000"
        ] {
            #expect(lines.contains(header), "\(header)")
        }
        #expect(lines.contains { $0.hasPrefix("Content-Type: multipart/alternative; boundary=\"=_herald_") })
        #expect(wire.contains("Content-Type: text/plain; charset=UTF-8") && wire.contains("Content-Type: text/html; charset=UTF-8"))
    }

    @Test func theRelaysRepliesAreOutcomes() {
        func outcome(_ code: Int) -> DeliveryOutcome {
            EmailChannel.outcome(of: ProviderResponse(status: code, body: "\(code) words"), now: Date())
        }
        #expect(outcome(250) == .delivered(messageID: "250 words"))
        #expect(outcome(451) == .retry(after: nil, reason: "the relay answered 451 words"))
        #expect(outcome(550) == .badRequest(reason: "the relay refused the message: 550 words"))
        if case .configurationError = outcome(535) {} else { Issue.record("535 is Herald's login refused") }
    }

    @Test func theSettingsComeFromTheEnvironmentAndNeverShowThePassword() throws {
        guard case .failure(let why) = EmailSettings.from([:]) else {
            Issue.record("configured with nothing")
            return
        }
        #expect(why.description.contains("HERALD_SMTP_URL"))
        let settings = try EmailSettings.from([
            "HERALD_SMTP_URL": "smtp://relay%40acme:s3cr%40t@mail.acme.test", "HERALD_EMAIL_FROM": "Acme Ops <ops@acme.test>",
            "HERALD_APP_URL": "https://app.acme.test/"
        ]).get()
        #expect(settings.smtp.url == "smtp://mail.acme.test:587" && settings.smtp.username == "relay@acme" && settings.smtp.password == "s3cr@t")
        #expect(!settings.smtp.allowPlain && settings.from == .init(address: "ops@acme.test", name: "Acme Ops"))
        #expect(settings.appURL == "https://app.acme.test" && settings.publicURL == settings.appURL)
        #expect(!settings.description.contains("s3cr") && settings.description.contains("relay@acme@mail.acme.test"))
        let http = EmailSettings.from([
            "HERALD_SMTP_URL": "http://mail.acme.test", "HERALD_EMAIL_FROM": "a@b.test", "HERALD_APP_URL": "https://x.test"
        ])
        if case .success = http { Issue.record("an http:// URL is not a relay") }
        for from in ["Ops <ops@acme>", "ops@acme.test>", "a b@acme.test", "@acme.test", "ops@acme.test, x@evil.test"] {
            let settings = EmailSettings.from([
                "HERALD_SMTP_URL": "smtp://mail.acme.test", "HERALD_EMAIL_FROM": from, "HERALD_APP_URL": "https://x.test"
            ])
            if case .success = settings { Issue.record("\(from) is not a sender") }
        }
    }
}
