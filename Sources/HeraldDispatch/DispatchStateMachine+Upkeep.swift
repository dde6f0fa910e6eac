import Foundation
import HeraldCore
import HeraldStore

/// The state machine's events from fan-out, the acknowledgement loop and upkeep.
extension DispatchStateMachine {
    // MARK: Fan-out

    /// Reserves room among the sends in flight for what a fan-out transaction may lease to
    /// this worker (counted in flight until `handedOff` or `releaseRoom`).
    /// - Returns: how many it may lease.
    mutating func reserveRoom() -> Int {
        let room = max(0, min(settings.claimBatch, settings.concurrency - counters.inFlight))
        counters.inFlight += room
        return room
    }

    /// A fan-out transaction committed, leasing `claimed` to this worker out of `reserved`:
    /// the send loop starts them on its next turn.
    mutating func handedOff(_ claimed: [ClaimedDelivery], reserved: Int) {
        counters.inFlight -= reserved - claimed.count
        counters.deliveriesLeased += claimed.count
        handOff += claimed
        for delivery in claimed { held.insert(delivery.id) }
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
        return .write(acknowledgements, changes: gateChanges, again: writeAgain)
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
        for acknowledgement in batch { held.remove(acknowledgement.deliveryID) }
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
        return .sleep(until: now + LoopBackoff.after(failures: writeFailures))
    }

    // MARK: Upkeep

    /// One tick of upkeep: what is due now.
    mutating func tick(at now: Instant) -> Upkeep {
        var upkeep = Upkeep(renew: nil, refreshWindow: false, gauges: nil)
        if lastRenewal.map({ $0 + settings.renewEvery <= now }) ?? true { upkeep.renew = Array(held) }
        if lastWindow.map({ $0 + Self.windowEvery <= now }) ?? true { upkeep.refreshWindow = true }
        if lastGauges.map({ $0 + Self.gaugesEvery <= now }) ?? true { upkeep.gauges = gate.heldBack(at: now) }
        return upkeep
    }

    mutating func renewed(at now: Instant) { lastRenewal = now }

    mutating func windowRefreshed(at now: Instant) { lastWindow = now }

    mutating func gaugesReported(at now: Instant) { lastGauges = now }
}
