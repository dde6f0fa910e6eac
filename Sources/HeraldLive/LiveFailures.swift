import HeraldLoops
import Logging

/// Each of the live hub's loops' failures, told once a streak and summarised once a minute
/// while it lasts (`FailureLog`).
struct LiveFailures: Sendable {
    let sequencer: FailureLog
    let rounds: FailureLog
    let presence: FailureLog
    let tellPresence: FailureLog
    let upkeep: FailureLog
    let credentials: FailureLog
    let typing: FailureLog

    init(logger: Logger) {
        sequencer = FailureLog("live sequencer", logger: logger)
        rounds = FailureLog("live round", logger: logger)
        presence = FailureLog("recording presence", logger: logger)
        tellPresence = FailureLog("telling presence", logger: logger)
        upkeep = FailureLog("live upkeep", logger: logger)
        credentials = FailureLog("checking live credentials", logger: logger)
        typing = FailureLog("relaying typing", logger: logger)
    }

    var all: [FailureLog] { [sequencer, rounds, presence, tellPresence, upkeep, credentials, typing] }
}
