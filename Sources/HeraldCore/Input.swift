import Foundation

/// Checks for everything a user types, each returning the normalised value or throwing an
/// `InputError` with one line that says what is allowed. Nothing is written before these pass.
public enum Input {
    /// Names (people, teams, tenants, activities, groups): 1 to 200 characters.
    ///
    /// Every length here is counted in Unicode scalars (code points), the unit PostgreSQL's
    /// `length()` counts in the schema's checks, so a value these rules pass is one the
    /// database stores. A `Character` (grapheme cluster) would not do: `a` followed by 250
    /// combining marks is one `Character` and 251 code points. Code points also bound the
    /// bytes: at most 4 each in UTF-8, so 800 bytes for a name, 4,000 for a text.
    public static let maxNameLength = 200
    /// Free text such as a rejection reason or a chat message: up to 1,000 characters.
    public static let maxTextLength = 1000
    /// Device tokens: up to 4,096 printable ASCII characters.
    public static let maxTokenLength = 4096

    /// A display name: trimmed, 1…200 characters, no control characters, valid UTF-8.
    public static func name(_ value: String, field: String = "name") throws -> String {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw InputError("\(field) must not be empty") }
        try checkText(trimmed, field: field, allowNewlines: false)
        try checkLength(trimmed, field: field, limit: maxNameLength)
        return trimmed
    }

    /// Free text (a reason): trimmed, up to 1,000 characters; newlines and tabs allowed.
    public static func text(_ value: String, field: String) throws -> String {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        try checkText(trimmed, field: field, allowNewlines: true)
        try checkLength(trimmed, field: field, limit: maxTextLength)
        return trimmed
    }

    /// At most `limit` Unicode scalars (see `maxNameLength`).
    private static func checkLength(_ value: String, field: String, limit: Int) throws {
        let length = value.unicodeScalars.count
        guard length <= limit else {
            throw InputError("\(field) is \(length) characters (Unicode code points) long; the limit is \(limit)")
        }
    }

    private static func checkText(_ value: String, field: String, allowNewlines: Bool) throws {
        for scalar in value.unicodeScalars {
            if scalar == "\u{FFFD}" { throw InputError("\(field) is not valid UTF-8") }
            if allowNewlines, scalar == "\n" || scalar == "\t" { continue }
            if scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}" {
                throw InputError("\(field) contains a control character (U+\(String(scalar.value, radix: 16, uppercase: true)))")
            }
        }
    }

    /// An email address, lowercased: `local@domain.tld`, at most 254 characters.
    public static func email(_ value: String) throws -> String {
        let email = trimmingSpaces(value).lowercased()
        // Every character allowed is ASCII, so the address is checked byte by byte (a byte of a
        // longer scalar is never allowed) and its bytes are its code points.
        let bytes = email.utf8
        let at = UInt8(ascii: "@")
        let dot = UInt8(ascii: ".")
        guard bytes.count <= 254, let split = bytes.firstIndex(of: at) else {
            throw InputError("\"\(printable(value))\" is not a valid email address")
        }
        let local = bytes[..<split]
        let domain = bytes[bytes.index(after: split)...]
        guard !local.isEmpty, local.count <= 64, local.allSatisfy({ Self.emailLocalBytes[Int($0)] }),
            domain.allSatisfy({ Self.emailDomainBytes[Int($0)] }), domain.contains(dot), domain.first != dot, domain.last != dot,
            !zip(domain, domain.dropFirst()).contains(where: { $0 == dot && $1 == dot })
        else {
            throw InputError("\"\(printable(value))\" is not a valid email address")
        }
        return email
    }

    /// `value` without the spaces (Unicode's category Zs, the tab and the zero-width space) at
    /// either end: Foundation's `trimmingCharacters(in: .whitespaces)`, without its copy through
    /// `NSString` (which was most of an email's check, and a `presence.subscribe` checks fifty).
    public static func trimmingSpaces(_ value: String) -> String {
        let scalars = value.unicodeScalars
        let isSpace = { (scalar: Unicode.Scalar) in
            scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
        }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        if first == scalars.startIndex, last == scalars.index(before: scalars.endIndex) { return value }
        return String(scalars[first...last])
    }

    /// The bytes allowed in an email's local part and domain, by value (256 entries: a byte of
    /// a non-ASCII scalar is allowed in neither; neither holds `@`).
    private static let emailLocalBytes = byteTable("abcdefghijklmnopqrstuvwxyz0123456789.!#$%&'*+/=?^_`{|}~-")
    private static let emailDomainBytes = byteTable("abcdefghijklmnopqrstuvwxyz0123456789.-")

    private static func byteTable(_ allowed: String) -> [Bool] {
        var table = [Bool](repeating: false, count: 256)
        for byte in allowed.utf8 { table[Int(byte)] = true }
        return table
    }

    /// A slug for tenants and teams: lowercase letters, digits and dashes, 1…63, starting
    /// with a letter or digit.
    public static func slug(_ value: String, field: String) throws -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-")
        guard (1...63).contains(value.count), value.allSatisfy({ allowed.contains($0) }), value.first != "-" else {
            throw InputError("\(field) \"\(printable(value))\" must be 1-63 lowercase letters, digits or dashes, not starting with a dash")
        }
        return value
    }

    public static func priority(_ value: String) throws -> Priority {
        guard let priority = Priority(rawValue: value.lowercased()) else {
            throw InputError("unknown priority \"\(printable(value))\"; use p0, p1, p2 or p3")
        }
        return priority
    }

    /// A deadline as `YYYY-MM-DD`, a real calendar date.
    public static func date(_ value: String, field: String = "deadline") throws -> LocalDate {
        guard let date = LocalDate(value) else {
            throw InputError("\(field) \"\(printable(value))\" is not a calendar date in the form YYYY-MM-DD")
        }
        return date
    }

    /// An ISO 8601 instant (RFC 3339) such as `2026-11-22T09:30:00Z` or
    /// `2026-11-22T10:30:00.250+01:00`: a real calendar day (years 0001-9999) at a real time of
    /// day, with `Z` or an offset from `-23:59` to `+23:59`. Read in the proleptic Gregorian
    /// calendar, as PostgreSQL stores it: Foundation's parser reads `2026-02-30` as March 2,
    /// `T24:00` as the next day, years before 1582 in the Julian calendar, and `+25:00` as an
    /// offset of one hour.
    public static func timestamp(_ value: String, field: String) throws -> Date {
        let refused = InputError("\(field) \"\(printable(String(value.prefix(40))))\" is not an ISO 8601 time such as 2026-11-22T09:30:00Z")
        let bytes = Array(value.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count, bytes[range].allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return bytes[range].reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        func byte(_ index: Int, is characters: String) -> Bool { index < bytes.count && characters.utf8.contains(bytes[index]) }
        guard byte(4, is: "-"), byte(7, is: "-"), byte(10, is: "Tt"), byte(13, is: ":"), byte(16, is: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let date = LocalDate(year: year, month: month, day: day),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            hour < 24, minute < 60, second < 60
        else { throw refused }
        var index = 19
        var fraction = 0.0
        if byte(index, is: ".") {
            let digits = bytes[(index + 1)...].prefix { (0x30...0x39).contains($0) }
            guard (1...9).contains(digits.count) else { throw refused }
            fraction = Double(digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }) / pow(10, Double(digits.count))
            index += 1 + digits.count
        }
        var offset = 0
        if byte(index, is: "Zz"), index + 1 == bytes.count {
            offset = 0
        } else if byte(index, is: "+-"), byte(index + 3, is: ":"), index + 6 == bytes.count,
            let offsetHours = number((index + 1)..<(index + 3)), let offsetMinutes = number((index + 4)..<(index + 6)),
            offsetHours < 24, offsetMinutes < 60
        {
            offset = (offsetHours * 3600 + offsetMinutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
        } else {
            throw refused
        }
        let seconds = date.daysSince1970 * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// An IANA time zone name such as `Europe/Paris`, or `UTC`.
    public static func timeZone(_ value: String) throws -> String {
        guard value == "UTC" || TimeZone.knownTimeZoneIdentifiers.contains(value) else {
            throw InputError("unknown time zone \"\(printable(value))\"; use an IANA name such as Europe/Paris or UTC")
        }
        return value
    }

    /// A locale tag such as `en`, `de` or `pt-BR`.
    public static func locale(_ value: String) throws -> String {
        let parts = value.split(separator: "-", omittingEmptySubsequences: false)
        let language = parts.first.map(String.init) ?? ""
        let validLanguage = (2...3).contains(language.count) && language.allSatisfy { $0.isASCII && $0.isLowercase }
        let validRegion =
            parts.count == 1
            || (parts.count == 2 && parts[1].count == 2 && parts[1].allSatisfy { $0.isASCII && $0.isUppercase })
        guard validLanguage, validRegion else {
            throw InputError("locale \"\(printable(value))\" is not a tag such as en, de or pt-BR")
        }
        return value
    }

    /// A push token: 1…4,096 printable ASCII characters, no spaces.
    public static func token(_ value: String) throws -> String {
        guard (1...maxTokenLength).contains(value.utf8.count), value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw InputError("a device token must be 1-\(maxTokenLength) printable ASCII characters without spaces")
        }
        return value
    }

    /// A push token as its provider issues them: an APNs device token is hexadecimal (32 bytes,
    /// 64 digits, today; Apple allows for longer), which is also what keeps it a single safe
    /// segment of the request path `/3/device/<token>`. FCM tokens are opaque: `token(_:)`.
    public static func token(_ value: String, provider: PushProvider) throws -> String {
        let token = try token(value)
        guard provider.hasHexTokens else { return token }
        guard (16...400).contains(token.utf8.count), token.utf8.count % 2 == 0, token.utf8.allSatisfy({ $0.isHexDigit }) else {
            throw InputError("an APNs device token is an even number (16-400) of hexadecimal digits, such as the 64 an iPhone reports")
        }
        return token.lowercased()
    }

    /// A Firebase Installation ID as FCM issues them: 22 characters of base64url.
    public static func fid(_ value: String) throws -> String {
        guard value.utf8.count == 22,
            value.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
        else {
            throw InputError("an FCM installation id (fid) is 22 characters of letters, digits, - and _, as FirebaseInstallations reports it")
        }
        return value
    }

    /// The one of a token and an FCM installation id given, unchecked (the API's body, the
    /// CLI's `--token` and `--fid`).
    /// - Throws: `InputError` unless exactly one is given.
    public static func deviceAddress(token: String?, fid: String?) throws -> (String, DeviceAddress) {
        switch (token, fid) {
        case (let token?, nil): return (token, .token)
        case (nil, let fid?): return (fid, .fid)
        default: throw InputError("give the device's registration token or its FCM installation id (fid), exactly one of them")
        }
    }

    /// A device's address at its provider: a token as `token(_:provider:)` checks it, or an
    /// installation id, which only FCM knows.
    public static func deviceAddress(_ value: String, _ address: DeviceAddress, provider: PushProvider) throws -> String {
        switch address {
        case .token: return try token(value, provider: provider)
        case .fid:
            guard provider.takesInstallationID else { throw InputError("an installation id (fid) is FCM's: APNs devices register a token") }
            return try fid(value)
        }
    }

    /// What a registered token is for (`alert` when not given): a Live Activity's push-to-start
    /// token is an iPhone's, addressed through APNs directly (docs/apps.md says why not through
    /// FCM).
    public static func deviceKind(_ value: String?, platform: Platform, provider: PushProvider, address: DeviceAddress) throws -> DeviceKind {
        guard let value else { return .alert }
        guard let kind = DeviceKind(rawValue: value.lowercased()), DeviceKind.registered.contains(kind) else {
            throw InputError("kind \"\(printable(value))\" is not one of \(DeviceKind.registered.map(\.rawValue).joined(separator: ", "))")
        }
        if kind == .liveActivity, platform != .ios || !provider.carriesLiveActivities || address != .token {
            throw InputError("a Live Activity push-to-start token is an iPhone's APNs token: give platform ios and provider apns")
        }
        return kind
    }

    /// A device's platform as an app registers it (not `email`: a person's address is Herald's to keep).
    public static func devicePlatform(_ value: String) throws -> Platform {
        try registered(value, field: "platform", among: Platform.registered)
    }

    /// A device's provider as an app registers it (not `email`).
    public static func deviceProvider(_ value: String) throws -> PushProvider {
        try registered(value, field: "provider", among: PushProvider.registered)
    }

    private static func registered<Value: RawRepresentable>(_ value: String, field: String, among values: [Value]) throws -> Value
    where Value.RawValue == String {
        guard let found = values.first(where: { $0.rawValue == value.lowercased() }) else {
            throw InputError("\(field) \"\(printable(value))\" is not one of \(values.map(\.rawValue).joined(separator: ", "))")
        }
        return found
    }

    /// A value of a closed set, such as `--app member|manager`.
    public static func choice<Value: RawRepresentable & CaseIterable>(_ value: String, field: String, as type: Value.Type) throws -> Value
    where Value.RawValue == String {
        guard let choice = Value(rawValue: value.lowercased()) else {
            let names = Value.allCases.map(\.rawValue).joined(separator: ", ")
            throw InputError("\(field) \"\(printable(value))\" is not one of \(names)")
        }
        return choice
    }

    /// An id as printed by herald.
    public static func id(_ value: String, field: String) throws -> UUID {
        guard let id = UUID(uuidString: value) else {
            throw InputError("\(field) \"\(printable(value))\" is not an id (a UUID such as 0193a1b2-...)")
        }
        return id
    }

    /// An http or https URL (a group's photo): at most 2,048 characters, no spaces.
    public static func url(_ value: String, field: String) throws -> String {
        guard value.utf8.count <= 2048, value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }),
            let components = URLComponents(string: value), ["http", "https"].contains(components.scheme?.lowercased() ?? ""),
            components.host?.isEmpty == false
        else {
            throw InputError("\(field) \"\(printable(value))\" is not an http(s) URL")
        }
        return value
    }

    /// A span of time such as `90s`, `15m`, `2h`, `7d` or `500ms` (a bare number is seconds).
    public static func duration(_ value: String, field: String) throws -> Duration {
        let units: [(String, Int64)] = [("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        let text = value.trimmingCharacters(in: .whitespaces).lowercased()
        var number = Substring(text)
        var scale: Int64 = 1_000
        for (suffix, milliseconds) in units where text.hasSuffix(suffix) {
            number = text.dropLast(suffix.count)
            scale = milliseconds
            break
        }
        guard !number.isEmpty, number.allSatisfy(\.isASCII), let amount = Int64(number), amount >= 0,
            amount <= Int64.max / scale / 1_000
        else {
            throw InputError("\(field) \"\(printable(value))\" is not a duration such as 90s, 15m, 2h or 7d")
        }
        return .milliseconds(amount * scale)
    }

    /// A point in the past as a user gives it: a duration back from `now` (`2h`, `3d`) or an
    /// ISO 8601 time; never later than `now`.
    public static func since(_ value: String, now: Date, field: String = "since") throws -> Date {
        let date: Date
        if let first = value.unicodeScalars.first, ("0"..."9").contains(first), value.utf8.count > 10 {
            date = try timestamp(value, field: field)
        } else {
            date = now.addingTimeInterval(-(try duration(value, field: field)).timeInterval)
        }
        guard date <= now else { throw InputError("\(field) is in the future") }
        return date
    }

    /// Input echoed in an error: control characters escaped, at most 60 characters.
    public static func printable(_ value: String) -> String {
        let text = TerminalText.escaped(value, .singleLine)
        // By scalar: one `Character` may hold thousands of combining marks.
        guard text.unicodeScalars.count > 60 else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.prefix(57))) + "..."
    }
}

/// How device tokens appear in anything a person reads: `dGhpcy…9a8b`.
public enum TokenDisplay {
    /// What output shows of a device's token: its first and last characters; of a Web Push
    /// subscription, the push service's origin (the endpoint's path names the browser, and is
    /// as secret as a token).
    public static func preview(_ token: String, provider: PushProvider) -> String {
        provider.addressIsEndpoint ? WebPushSubscription.origin(of: token) : provider == .email ? token : truncated(token)
    }

    public static func truncated(_ token: String) -> String {
        guard token.count > 12 else { return String(repeating: "•", count: min(token.count, 4)) }
        return token.prefix(6) + "…" + token.suffix(4)
    }
}

extension UInt8 {
    fileprivate var isASCIILetterOrDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }

    /// 0-9, a-f or A-F.
    fileprivate var isHexDigit: Bool { (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self) }
}
