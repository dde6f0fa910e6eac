import Foundation
import HeraldCore
import HeraldLoops
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
/// - leases: renewed every third of a lease, and a send started only while a third of its
///   lease is surely left (counted from when the statement that leased or renewed it was
///   sent, before the database read its clock), so that no send begins on a lease that may
///   have passed to another worker, or back to the queue (docs/architecture.md);
/// - the live window's refresh and the gauges;
/// - drain: nothing to fan out, nothing in flight or unacknowledged, then the store is asked
///   whether anything is due within the horizon;
/// - which providers are held back (`SendGate`).
struct DispatchStateMachine {
    typealias Instant = ContinuousClock.Instant

    let settings: Settings
    private(set) var counters = Dispatcher.Counters()
    /// Deliveries fan-out leased to this worker, waiting for the send loop (counted in
    /// `counters.inFlight` already).
    private var handOff: [ClaimedDelivery] = []
    /// The deliveries this worker holds, from their claim until their outcome is written:
    /// the only leases it renews. A claim the database committed but whose answer never
    /// arrived (the connection lost at that moment, a failover) leased deliveries this
    /// worker knows nothing of; renewed by owner, their leases never ran out and they were
    /// never sent.
    ///
    /// Each with the instant its lease surely holds until: a lease from when the statement
    /// that leased or last renewed it was sent. (The database's clock is read after that, so
    /// this is never later than the expiry it wrote, whatever the two clocks say. A fan-out
    /// transaction leases with the time it began: one that took seven seconds on a loaded
    /// machine handed over leases with three left.)
    private var held: [UUID: Instant] = [:]
    /// Each lease's deliveries still in hand: the outcome of its last one removes it.
    private var openLeases: [DeliveryLease: Int] = [:]
    /// Something may be waiting in the delivery queue (a hint from another worker, a retry,
    /// a reclaimed lease): the send loop claims on its next turn.
    private var queueHint = false
    private var acknowledgements: [Acknowledgement] = []
    private(set) var stopping = false
    private var sendingDone = false
    private var fanOutIdle = false
    /// The horizon of a drain, while `run(.drain)`.
    private var drainHorizon: Duration?
    /// When the last claim found nothing (`nil`: the next may claim at once).
    private var lastEmptyClaim: Instant?
    private var claimFailures = 0
    /// Failed writes of acknowledgements in a row.
    private var writeFailures = 0
    /// Whether what is pending was written before without an answer: it may be committed.
    private var writeAgain = false
    /// Which providers this worker holds back, and why.
    private var gate: SendGate
    /// Pauses and resumptions not yet written (the acknowledgement loop writes them).
    private var gateChanges: [SendGate.Change] = []
    private var lastRenewal: Instant?
    private var lastWindow: Instant?
    private var lastGauges: Instant?
    private var lastStatistics: Instant?

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

    /// A claim sent at `asked` leased these deliveries to this worker.
    /// - Returns: the deliveries to start sending.
    mutating func claimed(_ deliveries: [ClaimedDelivery], asked: Instant, at now: Instant) -> [ClaimedDelivery] {
        claimFailures = 0
        lastEmptyClaim = deliveries.isEmpty ? now : nil
        counters.inFlight += deliveries.count
        counters.deliveriesLeased += deliveries.count
        hold(deliveries, leasedAt: asked)
        return deliveries
    }

    /// A claim failed.
    /// - Returns: when to look again (or sooner, when woken).
    mutating func claimFailed(at now: Instant) -> Instant {
        claimFailures += 1
        return now + RetryPause.after(failures: claimFailures)
    }

    /// The store said whether anything is due within the drain's horizon.
    mutating func drainChecked(complete: Bool, at now: Instant) -> SendAction {
        complete ? .finish : .sleep(until: now + .milliseconds(50))
    }

    /// The queue may hold work for this worker.
    mutating func hintQueue() {
        queueHint = true
    }

    /// Whether a send may begin on this lease: only while a third of it is surely left (the
    /// next renewal is due by then). When not, the delivery goes back to the queue unsent
    /// (`finished(_:leaseRanShort:)`), for the next claim to lease afresh: begun, it could
    /// still be on its way when the lease ran out and the delivery was claimed and sent
    /// again.
    func mayStart(_ delivery: UUID, at now: Instant) -> Bool {
        guard let until = held[delivery] else { return false }
        return now + settings.renewEvery < until
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

    /// A send (or a delivery held back, cancelled or expired unsent) ended; `leaseRanShort`:
    /// it was given back unsent because too little of its lease was left (`mayStart`).
    /// - Returns: whether a full batch is waiting: wake the acknowledgement loop.
    mutating func finished(_ acknowledgement: Acknowledgement, leaseRanShort: Bool = false) -> Bool {
        acknowledgements.append(acknowledgement)
        switch acknowledgement.status {
        case .sent: counters.sent += 1
        case .queued:
            if leaseRanShort {
                counters.leasesRanShort += 1
            } else if acknowledgement.outcome == .configurationError {
                counters.pausedForConfiguration += 1
            } else if !acknowledgement.spent {
                counters.heldBack += 1
                if acknowledgement.attempted { counters.unanswered += 1 }
            } else {
                counters.retried += 1
            }
        case .deadToken: counters.deadTokens += 1
        case .failed: counters.failed += 1
        case .expired: counters.expired += 1
        case .cancelled: counters.cancelled += 1
        // Sent twice, neither answered: a send with no answer, like one held back.
        case .unanswered: counters.unanswered += 1
        case .sending: break  // an acknowledgement ends a send; never "sending"
        }
        return acknowledgements.count >= settings.acknowledgementFlush
    }

    // MARK: Fan-out

    /// Reserves room among the sends in flight for what a fan-out transaction may lease to
    /// this worker (counted in flight until `handedOff` or `releaseRoom`).
    /// - Returns: how many it may lease.
    mutating func reserveRoom() -> Int {
        let room = max(0, min(settings.claimBatch, settings.concurrency - counters.inFlight))
        counters.inFlight += room
        return room
    }

    /// A fan-out transaction begun at `leasedAt` committed, leasing `claimed` to this worker
    /// out of `reserved`: the send loop starts them on its next turn.
    mutating func handedOff(_ claimed: [ClaimedDelivery], reserved: Int, leasedAt: Instant) {
        counters.inFlight -= reserved - claimed.count
        counters.deliveriesLeased += claimed.count
        handOff += claimed
        hold(claimed, leasedAt: leasedAt)
    }

    /// A fan-out transaction failed: the room it reserved is free again.
    mutating func releaseRoom(_ reserved: Int) {
        counters.inFlight -= reserved
    }

    /// Events fanned out (counted once committed).
    mutating func fannedOut(events: Int, deliveries: Int) {
        counters.eventsFannedOut += events
        counters.deliveriesQueued += deliveries
    }

    /// Failures counted against events, and events passed over.
    mutating func fanOutFailed(counted: Int, passedOver: Int) {
        counters.fanOutFailures += counted
        counters.eventsPassedOver += passedOver
    }

    /// Whether the last look at the outbox found it empty (or took less than a batch).
    mutating func outboxLooked(idle: Bool) {
        fanOutIdle = idle
    }

    /// Due timers fired (their events fan out like any other) or found no longer applying.
    mutating func timersFired(_ fired: Int, skipped: Int) {
        counters.timersFired += fired
        counters.timersSkipped += skipped
    }

    // MARK: Acknowledgements

    /// The acknowledgement loop's next step: everything gathered so far, or a wait.
    mutating func nextAcknowledgements(at now: Instant) -> AcknowledgementAction {
        guard !acknowledgements.isEmpty || !gateChanges.isEmpty else {
            return sendingDone ? .finish : .sleep(until: now + .milliseconds(25))
        }
        defer {
            acknowledgements = []
            gateChanges = []
        }
        return .write(acknowledgements, changes: gateChanges, again: writeAgain, finishing: finishing(acknowledgements))
    }

    /// The leases whose last deliveries in hand `batch` settles.
    private func finishing(_ batch: [Acknowledgement]) -> [DeliveryLease] {
        var settled: [DeliveryLease: Int] = [:]
        for acknowledgement in batch { settled[DeliveryLease(tenantID: acknowledgement.tenantID, id: acknowledgement.leaseID), default: 0] += 1 }
        return settled.compactMap { lease, count in openLeases[lease] == count ? lease : nil }
    }

    /// A batch was written (`counted`: those whose lease still held).
    mutating func acknowledgementsWritten(_ batch: [Acknowledgement], counted: Int, at now: Instant) -> Written {
        guard !batch.isEmpty else {
            return Written(late: 0, requeued: false, then: sendingDone ? .finish : .sleep(until: now + .milliseconds(25)))
        }
        writeFailures = 0
        writeAgain = false
        // Written: their slots are free for the next sends.
        counters.inFlight -= batch.count
        for acknowledgement in batch {
            held[acknowledgement.deliveryID] = nil
            let lease = DeliveryLease(tenantID: acknowledgement.tenantID, id: acknowledgement.leaseID)
            if let open = openLeases[lease] { openLeases[lease] = open > 1 ? open - 1 : nil }
        }
        let late = batch.count - counted
        counters.lateAcknowledgements += late
        let requeued = batch.contains { $0.status == .queued }
        if requeued { queueHint = true }
        // After a full batch the next may be full already; otherwise the next gathers for
        // 100 ms (every statement costs its plan and round trip whatever its size).
        let then: AfterWrite = batch.count >= settings.acknowledgementFlush || sendingDone ? .next : .sleep(until: now + .milliseconds(100))
        return Written(late: late, requeued: requeued, then: then)
    }

    /// Writing a batch failed: it is kept, ahead of what came since, and tried again.
    mutating func acknowledgementsFailed(_ batch: [Acknowledgement], at now: Instant) -> AfterWrite {
        writeFailures += 1
        writeAgain = true
        acknowledgements = batch + acknowledgements
        if writeFailures > 50, sendingDone { return .finish }
        return .sleep(until: now + RetryPause.after(failures: writeFailures))
    }

    // MARK: Leases

    /// The leases to renew now (every third of a lease, counted from when the last renewal
    /// was sent), or `nil` when none is due.
    func leasesToRenew(at now: Instant) -> [UUID]? {
        guard lastRenewal.map({ $0 + settings.renewEvery <= now }) ?? true else { return nil }
        return Array(held.keys)
    }

    /// A renewal sent at `sent` extended the leases on `renewed` (a delivery being
    /// acknowledged at that moment was passed by: its lease stays as it was).
    mutating func renewed(_ renewed: [UUID], sent: Instant) {
        lastRenewal = sent
        for id in renewed where held[id] != nil { held[id] = sent + settings.lease }
    }

    /// The deliveries this worker has in hand: upkeep does not put them back in the queue
    /// when their lease has run out (a renewal that came late), it renews them.
    var leasesInHand: [UUID] { Array(held.keys) }

    /// Whether the leases still need renewing: until the sends have ended (those in flight
    /// at a shutdown included).
    var holdsLeases: Bool { !sendingDone }

    // MARK: Upkeep

    /// One tick of upkeep: what is due now.
    mutating func tick(at now: Instant) -> Upkeep {
        var upkeep = Upkeep(refreshWindow: false, gauges: nil)
        if lastWindow.map({ $0 + Self.windowEvery <= now }) ?? true { upkeep.refreshWindow = true }
        if lastGauges.map({ $0 + Self.gaugesEvery <= now }) ?? true { upkeep.gauges = gate.heldBack(at: now) }
        if lastStatistics.map({ $0 + Self.statisticsEvery <= now }) ?? true { upkeep.checkStatistics = true }
        return upkeep
    }

    mutating func windowRefreshed(at now: Instant) { lastWindow = now }

    mutating func gaugesReported(at now: Instant) { lastGauges = now }

    mutating func statisticsChecked(at now: Instant) { lastStatistics = now }

    private mutating func hold(_ deliveries: [ClaimedDelivery], leasedAt: Instant) {
        for delivery in deliveries {
            held[delivery.id] = leasedAt + settings.lease
            openLeases[DeliveryLease(tenantID: delivery.tenantID, id: delivery.leaseID), default: 0] += 1
        }
    }
}
