import Foundation

extension Date {
    /// `2026-11-21 23:48 UTC`: absolute and compact, for tables.
    var shortDisplay: String {
        var style = Date.ISO8601FormatStyle(timeZone: .gmt)
        style = style.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(.colon)
        return formatted(style).replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
    }
}

extension Date {
    /// `just now`, `5m ago`, `3h ago`, `2d ago` (or `in 5m` for the future).
    func relative(to now: Date) -> String {
        let seconds = Int(now.timeIntervalSince(self).rounded())
        let magnitude = abs(seconds)
        let text: String
        switch magnitude {
        case ..<10: return "just now"
        case ..<60: text = "\(magnitude)s"
        case ..<3600: text = "\(magnitude / 60)m"
        case ..<86_400: text = "\(magnitude / 3600)h"
        default: text = "\(magnitude / 86_400)d"
        }
        return seconds >= 0 ? "\(text) ago" : "in \(text)"
    }
}
