import Foundation

extension Date {
    /// `2026-11-21 23:48 UTC`: absolute and compact, for tables.
    var shortDisplay: String {
        var style = Date.ISO8601FormatStyle(timeZone: .gmt)
        style = style.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(.colon)
        return formatted(style).replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
    }
}
