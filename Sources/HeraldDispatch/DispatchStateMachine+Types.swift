import Foundation
import HeraldCore
import HeraldStore

/// What `DispatchStateMachine` is configured with and what it answers.
extension DispatchStateMachine {
    struct Settings: Sendable {
        var concurrency: Int
        var claimBatch: Int
        var acknowledgementFlush: Int
        var pollInterval: Duration
        var lease: Duration
        var gate: SendGate.Settings

        init(configuration: Dispatcher.Configuration) {
            concurrency = configuration.concurrency
            claimBatch = configuration.claimBatch
            acknowledgementFlush = configuration.acknowledgementFlush
            pollInterval = configuration.pollInterval
            lease = configuration.lease
            gate = SendGate.Settings(configurationPause: configuration.pauseOnConfigurationError)
        }

        /// A claim waits for room for half a batch: each one costs the database 2 ms of
        /// planning and a look into every busy tenant's queue, so fewer, larger claims (from
        /// a quarter of a batch: 158 deliveries a claim on average in a burn-down of 30,000)
        /// cut its CPU by 7-10 µs per delivery and left the rate as it was.
        var refill: Int { max(1, min(claimBatch, concurrency) / 2) }
        /// How often the leases this worker holds are renewed.
        var renewEvery: Duration { lease / 3 }
        /// How long upkeep sleeps between ticks.
        var upkeepEvery: Duration { min(.seconds(1), renewEvery) }
    }

    /// What the send loop does next.
    enum SendAction {
        /// Start sending these (already counted in flight).
        case start([ClaimedDelivery])
        /// Claim up to `limit` due deliveries, leaving out `paused` providers; then `claimed`
        /// or `claimFailed`.
        case claim(limit: Int, paused: [PushProvider])
        /// Ask the store whether anything is due within `horizon` (leaving out what waits for
        /// `paused` providers' configuration); then `drainChecked`.
        case checkDrain(horizon: Duration, paused: [PushProvider])
        /// Sleep until then, or until woken (a hint, a hand-off, room freed, a shutdown).
        case sleep(until: Instant)
        /// Stop sending: in-flight sends end and are acknowledged by the acknowledgement loop.
        case finish
    }

    /// What the acknowledgement loop does next.
    enum AcknowledgementAction {
        /// Write the providers' pauses and resumptions, then the outcomes (`again`: the last
        /// write of them failed without an answer, so it may have been committed) and remove
        /// the leases they finish; then `acknowledgementsWritten` or `acknowledgementsFailed`.
        case write([Acknowledgement], changes: [SendGate.Change], again: Bool, finishing: [DeliveryLease])
        /// Sleep until then, or until woken (a full batch, a pause, the end of sending).
        case sleep(until: Instant)
        case finish
    }

    /// What comes after a write of acknowledgements.
    enum AfterWrite: Equatable {
        case next
        case sleep(until: Instant)
        case finish
    }

    /// What a written batch of acknowledgements changed.
    struct Written: Equatable {
        /// Acknowledgements that came after their lease passed to another worker.
        var late: Int
        /// Some went back to the queue: the send loop should look at it.
        var requeued: Bool
        var then: AfterWrite
    }

    /// The upkeep one tick asks for, in this order; each is reported when done. (Leases are
    /// renewed by a loop of their own: `leasesToRenew`.)
    struct Upkeep: Equatable {
        /// Read again where live deliveries begin (`windowRefreshed`).
        var refreshWindow: Bool
        /// Report the queue's depth and these held-back providers.
        var gauges: [PushProvider]?
        /// Analyze the tables that changed more than they held (`statisticsChecked`).
        var checkStatistics = false
    }

    /// How often a worker reports the queue's depth and its held-back providers.
    static let gaugesEvery: Duration = .seconds(10)
    /// How often a worker reads again where live deliveries begin (`LiveWindow`).
    static let windowEvery: Duration = .seconds(1)
    /// How often a worker looks for tables whose statistics are older than their rows.
    static let statisticsEvery: Duration = Store.youngTablesCheckEvery
}
