import Foundation

/// How long history (notifications, their deliveries and attempts) is kept, and what that
/// means for its partitions, one per UTC week from Monday (named by that Monday): which to
/// create ahead and which have expired.
///
/// A week expires once all of it is older than the retention: with 7 days, the week of
/// Monday 2 March is dropped from Monday 16 March 00:00 UTC on.
public struct HistoryRetention: Sendable, Hashable, CustomStringConvertible {
    public let duration: Duration

    /// `HERALD_HISTORY_RETENTION` when it is not set.
    public static let `default` = HistoryRetention(checked: .seconds(90 * 86_400))
    /// The floor docs/operating/database.md documents: at least two days of history.
    public static let minimum: Duration = .seconds(2 * 86_400)
    /// Partitions are made this many days ahead, so that a worker down for a few days
    /// comes back to partitions ready for its first fan-out.
    public static let daysAhead = 7

    private init(checked duration: Duration) { self.duration = duration }

    /// A retention of `text` (`90d`, `72h`, …).
    /// - Throws: `InputError` for a malformed duration, one below 2 days, or one below
    ///   `deliveryDeadline` (history must outlive every delivery it holds).
    public init(parsing text: String, deliveryDeadline: Duration, field: String = "HERALD_HISTORY_RETENTION") throws {
        let duration = try Input.duration(text, field: field)
        guard duration >= Self.minimum else {
            throw InputError("\(field) \"\(Input.printable(text))\" is below the minimum of 2d")
        }
        guard duration >= deliveryDeadline else {
            throw InputError(
                "\(field) \"\(Input.printable(text))\" is shorter than the delivery deadline (\(deliveryDeadline.components.seconds)s): "
                    + "history would be dropped while its deliveries may still be retried")
        }
        self.duration = duration
    }

    /// The retention named in `environment`, or the default.
    public static func from(environment: [String: String], deliveryDeadline: Duration) throws -> HistoryRetention {
        guard let text = environment["HERALD_HISTORY_RETENTION"], !text.isEmpty else {
            guard Self.default.duration >= deliveryDeadline else {
                throw InputError("the delivery deadline is longer than the default history retention (90d): set HERALD_HISTORY_RETENTION")
            }
            return .default
        }
        return try HistoryRetention(parsing: text, deliveryDeadline: deliveryDeadline)
    }

    /// How much history one partition holds.
    public static let partitionSpan: TimeInterval = 7 * 86_400

    /// The partitions among those starting on `days` that have expired at `now`, oldest first.
    public func expired(_ days: [LocalDate], at now: Date) -> [LocalDate] {
        let cutoff = now.addingTimeInterval(-duration.timeInterval)
        return days.filter { Self.start(of: $0).addingTimeInterval(Self.partitionSpan) <= cutoff }.sorted()
    }

    /// The days partitions should exist for at `now` (the weeks holding them): today through
    /// `daysAhead` days ahead.
    public static func daysToCreate(at now: Date) -> (first: LocalDate, last: LocalDate) {
        (LocalDate(now, in: .utc), LocalDate(now.addingTimeInterval(Double(daysAhead) * 86_400), in: .utc))
    }

    /// An id above every id made by now: two days ahead (of every clock that makes ids, with
    /// a margin; partitions are made a week ahead). With a lower bound, it names the days a
    /// statement needs, so that PostgreSQL plans and reads only those partitions.
    public static func idCeiling(at now: Date = Date()) -> UUID {
        UUID.v7Floor(at: now.addingTimeInterval(2 * 86_400))
    }

    /// The largest whole unit: `90d`, `36h`.
    public var description: String {
        let seconds = duration.components.seconds
        for (unit, size) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }

    static func start(of day: LocalDate) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .utc
        return calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day)) ?? .distantFuture
    }
}
