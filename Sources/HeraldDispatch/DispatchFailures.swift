import HeraldLoops
import Logging

/// Each of a dispatcher's loops' failures, told once a streak and summarised once a minute
/// while it lasts (`FailureLog`): a worker whose database is away writes a few lines, not one
/// a turn.
struct DispatchFailures: Sendable {
    let fanOut: FailureLog
    let claims: FailureLog
    let outcomes: FailureLog
    let pauses: FailureLog
    let upkeep: FailureLog
    let leases: FailureLog
    let timers: FailureLog
    let history: FailureLog
    let drain: FailureLog

    init(logger: Logger) {
        fanOut = FailureLog("fan-out", logger: logger, level: .error)
        claims = FailureLog("claiming deliveries", logger: logger, level: .error)
        outcomes = FailureLog("recording delivery outcomes", logger: logger, level: .error)
        pauses = FailureLog("recording a provider's pause or resumption", logger: logger, level: .error)
        upkeep = FailureLog("lease upkeep", logger: logger)
        leases = FailureLog("renewing leases", logger: logger)
        timers = FailureLog("firing due timers", logger: logger, level: .error)
        history = FailureLog("history partition upkeep", logger: logger)
        drain = FailureLog("checking for remaining work", logger: logger)
    }

    var all: [FailureLog] { [fanOut, claims, outcomes, pauses, upkeep, leases, timers, history, drain] }
}
