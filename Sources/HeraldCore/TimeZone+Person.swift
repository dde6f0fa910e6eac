import Foundation

extension TimeZone {
    /// UTC: the zone of a person who named none, of calendar dates, and of the database.
    public static let utc = TimeZone(secondsFromGMT: 0) ?? .gmt

    /// A stored IANA zone name as a zone (docs/concepts.md, "People"): the API admits only
    /// names this machine knows (`Input.timeZone`), so a name it no longer knows (a zone
    /// removed from the database since) is UTC, the default every person starts with. The one
    /// rule for every clock Herald reads a person's time on: their words, quiet hours, digests,
    /// deadlines and Live Activities.
    public static func named(_ identifier: String) -> TimeZone {
        TimeZone(identifier: identifier) ?? .utc
    }
}
