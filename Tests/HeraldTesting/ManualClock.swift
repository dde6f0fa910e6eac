import Foundation
import Synchronization

/// A clock the test moves by hand: code under test that takes a `now` function reads it.
public final class ManualClock: Sendable {
    private let time: Mutex<Date>

    /// Starts at `start` (by default 2026-11-22 20:10:00 UTC).
    public init(_ start: Date = Date(timeIntervalSince1970: 1_795_303_800)) {
        time = Mutex(start)
    }

    public func now() -> Date { time.withLock { $0 } }

    public func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
}
