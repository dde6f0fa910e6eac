import Foundation
import HeraldCore

/// One email as it goes to the relay (RFC 5322 with MIME): headers that no name or text can
/// add to (CR and LF become spaces), non-ASCII names and subjects as RFC 2047 encoded words,
/// a text and an HTML part in quoted-printable, lines in CRLF (docs/notifications.md#email).
public struct EmailMessage: Sendable, Equatable {
    /// A mailbox: an address and the name shown with it.
    public struct Mailbox: Sendable, Equatable {
        public var address: String
        public var name: String?
        public init(address: String, name: String? = nil) {
            self.address = address
            self.name = name
        }
    }

    public var from: Mailbox
    public var to: Mailbox
    public var subject: String
    public var text: String
    public var html: String?
    /// Without the angle brackets: `<id>@<domain>`.
    public var messageID: String
    /// The thread's first message (an activity's): `In-Reply-To` and `References`.
    public var thread: String?
    /// The one-click address (`List-Unsubscribe`, RFC 8058).
    public var unsubscribe: String?
    public var date: Date

    public init(
        from: Mailbox, to: Mailbox, subject: String, text: String, html: String? = nil, messageID: String, thread: String? = nil,
        unsubscribe: String? = nil, date: Date
    ) {
        self.from = from
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.messageID = messageID
        self.thread = thread
        self.unsubscribe = unsubscribe
        self.date = date
    }

    /// The message as sent: headers, a blank line, the body.
    public var wire: String {
        var headers: [(String, String)] = [
            ("Date", Self.date(date)), ("From", Self.mailbox(from)), ("To", Self.mailbox(to)),
            ("Message-ID", "<\(Self.headerSafe(messageID))>"), ("Subject", Self.encodedWords(subject, already: "Subject: ".count))
        ]
        if let thread {
            headers.append(("In-Reply-To", "<\(Self.headerSafe(thread))>"))
            headers.append(("References", "<\(Self.headerSafe(thread))>"))
        }
        if let unsubscribe {
            headers.append(("List-Unsubscribe", "<\(Self.headerSafe(unsubscribe))>"))
            headers.append(("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"))
        }
        headers.append(("Auto-Submitted", "auto-generated"))
        headers.append(("MIME-Version", "1.0"))
        var lines = headers.map { "\($0.0): \($0.1)" }
        if let html {
            let boundary =
                "=_herald_" + messageID.unicodeScalars.filter { $0.properties.isAlphabetic || ("0"..."9").contains($0) }.map(String.init).joined()
            lines.append("Content-Type: multipart/alternative; boundary=\"\(boundary)\"")
            lines.append("")
            lines.append("--\(boundary)")
            lines += Self.part(text, type: "text/plain")
            lines.append("--\(boundary)")
            lines += Self.part(html, type: "text/html")
            lines.append("--\(boundary)--")
        } else {
            lines += Self.part(text, type: "text/plain").map { $0 }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// A part's headers, a blank line, its text in quoted-printable.
    static func part(_ text: String, type: String) -> [String] {
        ["Content-Type: \(type); charset=UTF-8", "Content-Transfer-Encoding: quoted-printable", "", quotedPrintable(text)]
    }

    /// A value with CR and LF (and other control characters) as spaces: nothing in it can
    /// start another header.
    static func headerSafe(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? " " : $0 }))
    }

    /// `Name <address>`: the name quoted when it has specials, RFC 2047 words when it is not
    /// ASCII; the address stripped of anything that could end the header or the brackets.
    static func mailbox(_ box: Mailbox) -> String {
        let address = String(headerSafe(box.address).unicodeScalars.filter { $0 != " " && $0 != "<" && $0 != ">" && $0 != "," && $0 != "\"" })
        guard let name = box.name.map(headerSafe)?.trimmingCharacters(in: .whitespaces), !name.isEmpty else { return "<\(address)>" }
        if name.unicodeScalars.allSatisfy(\.isASCII) {
            let quoted = name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            return "\"\(quoted)\" <\(address)>"
        }
        return encodedWords(name, already: 6) + " <\(address)>"
    }

    /// ASCII text as it is; other text as RFC 2047 `=?UTF-8?B?…?=` words of at most 75
    /// characters, each whole scalars (a word never splits a character's bytes), folded onto
    /// lines of their own.
    static func encodedWords(_ text: String, already: Int) -> String {
        let safe = headerSafe(text)
        if safe.unicodeScalars.allSatisfy(\.isASCII) { return safe }
        // 75 characters: `=?UTF-8?B?` and `?=` are 12; 63 base64 characters hold 45 bytes whole.
        var words: [String] = []
        var chunk: [UInt8] = []
        for scalar in safe.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            if chunk.count + bytes.count > 45 {
                words.append("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=") }
        return words.joined(separator: "\r\n ")
    }

    /// Quoted-printable (RFC 2045): lines of at most 76 characters, soft breaks `=`, CRLF
    /// line ends; a space or tab before a line end encoded, and a dot that starts a line (some
    /// relays strip it). Written byte by byte into one buffer.
    static func quotedPrintable(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 8 + 16)
        var column = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            // CRLF, a lone CR and a lone LF all end a line.
            if byte == 13 || byte == 10 {
                if byte == 13, index + 1 < bytes.count, bytes[index + 1] == 10 { index += 1 }
                out += [13, 10]
                column = 0
                index += 1
                continue
            }
            let next = index + 1 < bytes.count ? bytes[index + 1] : 10
            let lineEnds = next == 10 || next == 13
            let plain = (byte >= 33 && byte <= 126 && byte != 61 && !(column == 0 && byte == 46)) || ((byte == 32 || byte == 9) && !lineEnds)
            let width = plain ? 1 : 3
            if column + width > 75 {
                out += [61, 13, 10]
                column = 0
            }
            if plain && !(column == 0 && byte == 46) {
                out.append(byte)
            } else {
                out += [61, hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
            column += plain && !(column == 0 && byte == 46) ? 1 : 3
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 5322's date: `Sun, 29 Nov 2026 08:00:00 +0000` (by arithmetic: a calendar
    /// object cost more than the rest of the headers).
    static func date(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        let names = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let weekday = names[Int(((days % 7) + 7) % 7)]
        return "\(weekday), \(two(day)) \(months[Int(month - 1) % 12]) \(year) \(two(time / 3600)):\(two(time % 3600 / 60)):\(two(time % 60)) +0000"
    }
}
