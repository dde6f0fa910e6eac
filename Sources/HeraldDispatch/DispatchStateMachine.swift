import Foundation
import HeraldCore
import HeraldStore

/// Every decision of a dispatcher's loops, as a value: each `mutating` function takes one
/// event (a claim came back, a send finished, acknowledgements were written or failed, a
/// tick of upkeep at an instant passed in, a shutdown) and returns what to do next. It reads
/// no clock and performs no I/O; `Dispatcher` holds it under one lock, performs its actions
/// against the store and the providers, and tells it how they ended.
///
/// It decides:
/// - the claim cadence: a claim waits for room for half a batch, and for a hint (or the
///   next look at the queue) after a claim that found nothing;
/// - the room in flight: a delivery takes a slot from its claim (or hand-off by fan-out)
///   until its outcome is written, so that at most `concurrency` are sent and unrecorded;
/// - acknowledgement batching: a full batch is written at once, otherwise one gathers for
///   100 ms after a write and at most 25 ms while idle; a failed write is kept and retried
///   first, in order;
/// - lease renewal (a third of the lease), the live window's refresh and the gauges;
/// - drain: nothing to fan out, nothing in flight or unacknowledged, then the store is asked
///   whether anything is due within the horizon;
/// - which providers are held back (`SendGate`).
struct DispatchStateMachine {
    typealias Instant = ContinuousClock.Instant

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
        /// write of them failed without an answer, so it may have been committed); then
        /// `acknowledgementsWritten` or `acknowledgementsFailed`.
        case write([Acknowledgement], changes: [SendGate.Change], again: Bool)
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

    /// The upkeep one tick asks for, in this order; each is reported when done.
    struct Upkeep: Equatable {
        /// Renew the leases on these deliveries (`renewed`).
        var renew: [UUID]?
        /// Read again where live deliveries begin (`windowRefreshed`).
        var refreshWindow: Bool
        /// Report the queue's depth and these held-back providers.
        var gauges: [PushProvider]?
    }

    /// How often a worker reports the queue's depth and its held-back providers.
    static let gaugesEvery: Duration = .seconds(10)
    /// How often a worker reads again where live deliveries begin (`LiveWindow`).
    static let windowEvery: Duration = .seconds(5)

    let settings: Settings
    var counters = Dispatcher.Counters()
    /// Deliveries fan-out leased to this worker, waiting for the send loop (counted in
    /// `counters.inFlight` already).
    var handOff: [ClaimedDelivery] = []
    /// The deliveries this worker holds, from their claim until their outcome is written:
    /// the only leases it renews. A claim the database committed but whose answer never
    /// arrived (the connection lost at that moment, a failover) leased deliveries this
    /// worker knows nothing of; renewed by owner, their leases never ran out and they were
    /// never sent.
    var held: Set<UUID> = []
    /// Something may be waiting in the delivery queue (a hint from another worker, a retry,
    /// a reclaimed lease): the send loop claims on its next turn.
    var queueHint = false
    var acknowledgements: [Acknowledgement] = []
    var stopping = false
    var sendingDone = false
    var fanOutIdle = false
    /// The horizon of a drain, while `run(.drain)`.
    var drainHorizon: Duration?
    /// When the last claim found nothing (`nil`: the next may claim at once).
    var lastEmptyClaim: Instant?
    var claimFailures = 0
    /// Failed writes of acknowledgements in a row.
    var writeFailures = 0
    /// Whether what is pending was written before without an answer: it may be committed.
    var writeAgain = false
    /// Which providers this worker holds back, and why.
    var gate: SendGate
    /// Pauses and resumptions not yet written (the acknowledgement loop writes them).
    var gateChanges: [SendGate.Change] = []
    var lastRenewal: Instant?
    var lastWindow: Instant?
    var lastGauges: Instant?

    init(settings: Settings) {
        self.settings = settings
        self.gate = SendGate(settings: settings.gate)
    }

    // MARK: Running and stopping

    /// A run begins (`drain`: its horizon, or `nil` to run until shut down).
    mutating func start(drain: Duration?, at now: Instant) {
        stopping = false
        sendingDone = false
        fanOutIdle = false
        drainHorizon = drain
        lastEmptyClaim = nil
        claimFailures = 0
        lastRenewal = now
        lastWindow = now
        lastGauges = nil
    }

    /// Stop claiming; what is in flight finishes and is acknowledged.
    mutating func shutdown() {
        stopping = true
    }

    /// The send loop ended: the acknowledgement loop writes what is left and ends.
    mutating func sendingEnded() {
        sendingDone = true
        stopping = true
    }

    // MARK: Sending

    /// The send loop's next step. `jitter` (0.5...1) spreads the workers' idle polls apart.
    mutating func nextSend(at now: Instant, jitter: Double = 1) -> SendAction {
        if stopping { return .finish }
        if !handOff.isEmpty {
            defer { handOff = [] }
            return .start(handOff)
        }
        let room = settings.concurrency - counters.inFlight
        let draining = drainHorizon != nil
        let recheck: Duration = draining ? .milliseconds(50) : settings.pollInterval / 4
        if room >= settings.refill, queueHint || lastEmptyClaim.map({ $0 + recheck <= now }) ?? true {
            queueHint = false
            return .claim(limit: min(room, settings.claimBatch), paused: gate.heldBack(at: now))
        }
        if counters.inFlight == 0, let horizon = drainHorizon, fanOutIdle, acknowledgements.isEmpty {
            return .checkDrain(horizon: horizon, paused: gate.pausedForConfiguration(at: now))
        }
        // Wait for a hint, a hand-off, room to free up, or the next look at the queue.
        let wait: Duration =
            if room < settings.refill { .seconds(1) } else if counters.inFlight > 0 || draining { recheck } else { settings.pollInterval * jitter }
        return .sleep(until: now + wait)
    }

    /// A claim leased these deliveries to this worker.
    /// - Returns: the deliveries to start sending.
    mutating func claimed(_ deliveries: [ClaimedDelivery], at now: Instant) -> [ClaimedDelivery] {
        claimFailures = 0
        lastEmptyClaim = deliveries.isEmpty ? now : nil
        take(deliveries)
        return deliveries
    }

    /// A claim failed.
    /// - Returns: when to look again (or sooner, when woken).
    mutating func claimFailed(at now: Instant) -> Instant {
        claimFailures += 1
        return now + LoopBackoff.after(failures: claimFailures)
    }

    /// The store said whether anything is due within the drain's horizon.
    mutating func drainChecked(complete: Bool, at now: Instant) -> SendAction {
        complete ? .finish : .sleep(until: now + .milliseconds(50))
    }

    /// The queue may hold work for this worker.
    mutating func hintQueue() {
        queueHint = true
    }

    /// Whether a delivery for `provider` is sent now.
    mutating func admit(_ provider: PushProvider, at now: Instant) -> SendGate.Verdict {
        gate.admit(provider, at: now)
    }

    /// How a send ended, as far as the gate cares.
    /// - Returns: the change to tell operators of, and whether the provider is held back now.
    mutating func answered(
        _ answer: SendGate.Answer, by provider: PushProvider, probe: Bool, at now: Instant
    ) -> (change: SendGate.Change?, heldBack: Bool) {
        let change = gate.record(answer, for: provider, probe: probe, at: now)
        if let change {
            gateChanges.append(change)
            if case .resumed = change { queueHint = true }
        }
        return (change, gate.isHeldBack(provider, at: now))
    }

    /// A probe ended without an answer (the send was cancelled): the next send probes.
    mutating func abandonProbe(_ provider: PushProvider, at now: Instant) {
        gate.abandonProbe(provider, at: now)
    }

    /// These providers' configuration was read again: a held-back one gets its probe now.
    mutating func configurationReloaded(_ providers: Set<PushProvider>, at now: Instant) {
        for provider in providers { gate.probeSoon(provider, at: now) }
        queueHint = true
    }

    /// Providers whose deliveries this worker does not claim now.
    func heldBack(at now: Instant) -> [PushProvider] {
        gate.heldBack(at: now)
    }

    /// A send (or a delivery held back, cancelled or expired unsent) ended.
    /// - Returns: whether a full batch is waiting: wake the acknowledgement loop.
    mutating func finished(_ acknowledgement: Acknowledgement) -> Bool {
        acknowledgements.append(acknowledgement)
        switch acknowledgement.status {
        case .sent: counters.sent += 1
        case .queued:
            if acknowledgement.outcome == .configurationError {
                counters.pausedForConfiguration += 1
            } else if !acknowledgement.spent {
                counters.heldBack += 1
            } else {
                counters.retried += 1
            }
        case .deadToken: counters.deadTokens += 1
        case .failed: counters.failed += 1
        case .expired: counters.expired += 1
        case .cancelled: counters.cancelled += 1
        case .sending: break  // an acknowledgement ends a send; never "sending"
        }
        return acknowledgements.count >= settings.acknowledgementFlush
    }

    private mutating func take(_ deliveries: [ClaimedDelivery]) {
        counters.inFlight += deliveries.count
        counters.deliveriesLeased += deliveries.count
        for delivery in deliveries { held.insert(delivery.id) }
    }
}
