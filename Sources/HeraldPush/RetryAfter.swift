import Foundation

/// The `Retry-After` header: delay seconds, or an HTTP date (RFC 9110 §10.2.3).
public enum RetryAfter {
    /// The wait it asks for, measured from `now`; nil when absent or unreadable. A date in
    /// the past means "now" (zero).
    public static func parse(_ value: String?, now: Date) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if value.allSatisfy(\.isASCIIDigit) {
            guard let seconds = Int64(value) else { return nil }
            return .seconds(seconds)
        }
        for format in formats {
            let parser = DateFormatter()
            parser.locale = Locale(identifier: "en_US_POSIX")
            parser.timeZone = TimeZone(identifier: "GMT")
            parser.dateFormat = format
            if let date = parser.date(from: value) {
                let seconds = max(0, date.timeIntervalSince(now))
                return .milliseconds(Int64((seconds * 1000).rounded(.up)))
            }
        }
        return nil
    }

    /// IMF-fixdate, then the obsolete RFC 850 and asctime forms HTTP still allows.
    private static let formats = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"]
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
