import Foundation
import HeraldCore
import HeraldStore

/// What fan-out does when writing events fails: retries them as they are, or suspects the
/// events themselves. Pure decisions; the dispatcher does the writing.
///
/// A lost connection, a deadlock, a failover or a full disk pass, and the same events are
/// then written as if nothing happened. But an error the database raises for one event's
/// rows (a constraint it breaks, a value out of range) comes back every time, and since a
/// batch is the oldest events, it would hold every event behind it forever. After such a
/// failure the next batch is written event by event, and an event that fails on its own is
/// counted; after `Dispatcher.Configuration.fanOutAttempts` of them it is passed over.
enum FanOutFailure {
    /// Whether `error` may come from the events being written rather than from the state
    /// of the database or the connection: an SQLSTATE of class 22 (data exception), 23
    /// (integrity constraint) or 54 (program limit exceeded), a value that cannot be
    /// decoded, or a template or snapshot fan-out cannot use.
    static func mayBeTheEvents(_ error: any Error) -> Bool {
        if Store.isRefusedData(error) { return true }
        switch error {
        case is InputError, is FanOut.Failure:
            return true
        default:
            return false
        }
    }

    /// Whether the events that failed in a batch written event by event are counted against
    /// themselves. When every event of a batch of several fails, the cause is more likely
    /// the database than each of them (a constraint that refuses every row): nothing is
    /// counted, and the batch is tried again later. One failing with nothing written beside
    /// it is counted (most often it is alone in the queue, and trying it forever would only
    /// hide it).
    static func counts(failed: Int, written: Int) -> Bool {
        failed > 0 && (written > 0 || failed == 1)
    }

    /// The error as recorded for the admin: its description (a `PostgresError`'s leaves out
    /// parameters and the server's `DETAIL`, which may quote row values), cut to 500
    /// characters.
    static func recorded(_ error: any Error) -> String {
        let text = "\(error)"
        // By scalar, the unit the database counts in.
        guard text.unicodeScalars.count > 500 else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.prefix(499))) + "…"
    }
}
