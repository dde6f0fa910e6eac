import Foundation
import HeraldCore
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// The dispatcher's decisions with no database, no network and a clock the test moves:
/// claim cadence, room in flight, acknowledgement batching, lease renewal, drain, shutdown.
struct DispatchStateMachineTests {
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// 8 sends at once, claims of up to 8 (so a claim waits for room for 4), acknowledgements
    /// written by 2, polls every 400 ms, leases of 3 s.
    func machine(drain: Duration? = nil) -> DispatchStateMachine {
        var configuration = Dispatcher.Configuration()
        configuration.concurrency = 8
        configuration.claimBatch = 8
        configuration.pollInterval = .milliseconds(400)
        configuration.lease = .seconds(3)
        var machine = DispatchStateMachine(settings: DispatchStateMachine.Settings(configuration: configuration))
        machine.start(drain: drain, at: at(0))
        return machine
    }

    func delivery(_ provider: PushProvider = .fcm) -> ClaimedDelivery {
        let now = Date()
        return ClaimedDelivery(
            tenantID: UUID(), id: UUID(), notificationID: UUID(), deviceID: UUID(), provider: provider, app: .member, attempt: 1,
            firstAttemptAt: now, deadlineAt: now.addingTimeInterval(3600), token: "token", address: .token, deviceActive: true,
            content: NotificationContent(title: "t", body: "b", data: [:], badge: 0, sound: false, threadID: "t"), eventAt: now, claimedAt: now,
            leaseID: UUID())
    }

    func acknowledgement(of delivery: ClaimedDelivery, _ status: DeliveryStatus = .sent) -> Acknowledgement {
        Acknowledgement(
            tenantID: delivery.tenantID, deliveryID: delivery.id, notificationID: delivery.notificationID, deviceID: delivery.deviceID,
            provider: delivery.provider, attempt: delivery.attempt, leaseID: delivery.leaseID, status: status,
            outcome: status == .sent ? .delivered : .retry,
            nextAttemptAt: nil, httpStatus: 200, messageID: nil, error: nil, startedAt: Date(), finishedAt: Date())
    }

    func claim(_ action: DispatchStateMachine.SendAction) -> (limit: Int, paused: [PushProvider])? {
        if case .claim(let limit, let paused) = action { return (limit, paused) }
        return nil
    }

    func sleep(_ action: DispatchStateMachine.SendAction) -> ContinuousClock.Instant? {
        if case .sleep(let until) = action { return until }
        return nil
    }

    func written(_ action: DispatchStateMachine.AcknowledgementAction) -> [Acknowledgement]? {
        if case .write(let batch, _, _, _) = action { return batch }
        return nil
    }

    /// A lease goes with the write of its batch's last outcome, not before; one whose write
    /// failed is named again when the batch is written again.
    @Test func aLeaseIsFinishedWithItsLastOutcome() {
        var machine = machine()
        #expect(claim(machine.nextSend(at: at(0)))?.limit == 8)
        // Three deliveries of one tenant under one lease.
        let (lease, tenant) = (UUID(), UUID())
        let batch = [delivery(), delivery(), delivery()].map {
            ClaimedDelivery(
                tenantID: tenant, id: $0.id, notificationID: $0.notificationID, deviceID: $0.deviceID, provider: $0.provider, app: $0.app,
                attempt: 1, firstAttemptAt: $0.firstAttemptAt, deadlineAt: $0.deadlineAt, token: $0.token, address: $0.address,
                deviceActive: true, content: $0.content, eventAt: $0.eventAt, claimedAt: $0.claimedAt, leaseID: lease)
        }
        _ = machine.claimed(batch, asked: at(1), at: at(1))
        _ = machine.finished(acknowledgement(of: batch[0]))
        _ = machine.finished(acknowledgement(of: batch[1]))
        guard case .write(let first, _, _, let finishing) = machine.nextAcknowledgements(at: at(2)) else {
            Issue.record("expected a write")
            return
        }
        #expect(first.count == 2 && finishing.isEmpty, "one of the lease's deliveries is still in hand")
        _ = machine.acknowledgementsWritten(first, counted: 2, at: at(3))
        _ = machine.finished(acknowledgement(of: batch[2]))
        guard case .write(let last, _, _, let closing) = machine.nextAcknowledgements(at: at(4)) else {
            Issue.record("expected a write")
            return
        }
        #expect(last.count == 1 && closing == [DeliveryLease(tenantID: tenant, id: lease)])
        _ = machine.acknowledgementsFailed(last, at: at(5))
        guard case .write(_, _, let again, let stillClosing) = machine.nextAcknowledgements(at: at(6)) else {
            Issue.record("expected the write again")
            return
        }
        #expect(again && stillClosing == [DeliveryLease(tenantID: tenant, id: lease)])
    }

    @Test func claimSendAcknowledgeThenDrain() {
        var machine = machine(drain: .seconds(1))
        // Nothing in flight: the first turn claims a full batch.
        #expect(claim(machine.nextSend(at: at(0)))?.limit == 8)
        let sent = [delivery(), delivery(), delivery()]
        #expect(machine.claimed(sent, asked: at(1), at: at(1)).map(\.id) == sent.map(\.id))
        #expect(machine.counters.inFlight == 3)
        #expect(machine.counters.deliveriesLeased == 3)
        // 5 slots free (≥ 4): it claims again at once, for what room is left.
        #expect(claim(machine.nextSend(at: at(2)))?.limit == 5)
        _ = machine.claimed([], asked: at(3), at: at(3))
        // The queue was empty and sends are in flight: look again after a quarter poll.
        #expect(sleep(machine.nextSend(at: at(4))) == at(4) + .milliseconds(50))

        // Sends finish; a batch of 2 wakes the acknowledgement loop.
        #expect(machine.finished(acknowledgement(of: sent[0])) == false)
        #expect(machine.finished(acknowledgement(of: sent[1])) == true)
        #expect(machine.finished(acknowledgement(of: sent[2], .queued)) == true)
        #expect(machine.counters.sent == 2)
        #expect(machine.counters.retried == 1)
        // Leases renewed are the ones held: until written, all three.
        #expect(Set(machine.leasesToRenew(at: at(1_000)) ?? []) == Set(sent.map(\.id)))
        let batch = written(machine.nextAcknowledgements(at: at(10))) ?? []
        #expect(batch.map(\.deliveryID) == sent.map(\.id))
        let result = machine.acknowledgementsWritten(batch, counted: 3, at: at(11))
        #expect(result == .init(late: 0, requeued: true, then: .next), "a full batch: the next may be full already")
        #expect(machine.counters.inFlight == 0)
        #expect(machine.leasesToRenew(at: at(1_000)) == [], "nothing held once written")

        // The retry went back to the queue: a hint, so the next turn claims.
        #expect(claim(machine.nextSend(at: at(12)))?.limit == 8)
        _ = machine.claimed([], asked: at(13), at: at(13))
        // Fan-out has not said it is idle yet: a drain keeps waiting.
        #expect(sleep(machine.nextSend(at: at(14))) != nil)
        machine.outboxLooked(idle: true)
        guard case .checkDrain(let horizon, let paused) = machine.nextSend(at: at(15)) else {
            Issue.record("expected a drain check")
            return
        }
        #expect(horizon == .seconds(1))
        #expect(paused.isEmpty)
        #expect(sleep(machine.drainChecked(complete: false, at: at(16))) == at(66))
        guard case .finish = machine.drainChecked(complete: true, at: at(70)) else {
            Issue.record("a complete drain finishes")
            return
        }
        machine.sendingEnded()
        guard case .finish = machine.nextAcknowledgements(at: at(71)) else {
            Issue.record("nothing left to write: the acknowledgement loop ends")
            return
        }
    }

    @Test func aClaimWaitsForRoomForHalfABatch() {
        var machine = machine()
        _ = machine.nextSend(at: at(0))
        let five = (0..<5).map { _ in delivery() }
        _ = machine.claimed(five, asked: at(1), at: at(1))
        // 3 slots free (< 4): no claim, even with a hint; a second's wait unless woken.
        machine.hintQueue()
        #expect(sleep(machine.nextSend(at: at(2))) == at(1_002))
        _ = machine.finished(acknowledgement(of: five[0]))
        _ = machine.finished(acknowledgement(of: five[1]))
        // Finished is not free: the slot is given back when the outcome is written.
        #expect(sleep(machine.nextSend(at: at(3))) != nil)
        let batch = written(machine.nextAcknowledgements(at: at(4))) ?? []
        _ = machine.acknowledgementsWritten(batch, counted: 2, at: at(5))
        #expect(claim(machine.nextSend(at: at(6)))?.limit == 5, "the hint is still pending and room is back")
    }

    @Test func anEmptyQueueIsLookedAtAgainAfterAPollOrAHint() {
        var machine = machine()
        _ = machine.nextSend(at: at(0))
        _ = machine.claimed([], asked: at(0), at: at(0))
        // Idle: a jittered poll.
        #expect(sleep(machine.nextSend(at: at(10), jitter: 0.5)) == at(210))
        #expect(sleep(machine.nextSend(at: at(50))) != nil, "a quarter poll has not passed")
        #expect(claim(machine.nextSend(at: at(100))) != nil, "a quarter poll has passed")
        _ = machine.claimed([], asked: at(100), at: at(100))
        machine.hintQueue()
        #expect(claim(machine.nextSend(at: at(101))) != nil, "a hint claims at once")
    }

    @Test func fanOutHandsItsLeasesToTheSendLoopFirst() {
        var machine = machine()
        let reserved = machine.reserveRoom()
        #expect(reserved == 8)
        #expect(machine.counters.inFlight == 8)
        let leased = [delivery(), delivery()]
        machine.handedOff(leased, reserved: reserved, leasedAt: at(0))
        #expect(machine.counters.inFlight == 2)
        guard case .start(let started) = machine.nextSend(at: at(1)) else {
            Issue.record("hand-offs start first")
            return
        }
        #expect(started.map(\.id) == leased.map(\.id))
        #expect(claim(machine.nextSend(at: at(2)))?.limit == 6)
        // A failed transaction gives back all it reserved.
        let again = machine.reserveRoom()
        machine.releaseRoom(again)
        #expect(machine.counters.inFlight == 2)
    }

    @Test func acknowledgementsGatherAndAFailedWriteIsRetriedFirst() {
        var machine = machine()
        let one = delivery()
        let two = delivery()
        guard case .sleep(let until) = machine.nextAcknowledgements(at: at(0)) else {
            Issue.record("nothing to write: wait")
            return
        }
        #expect(until == at(25))
        _ = machine.reserveRoom()
        machine.handedOff([one, two], reserved: 8, leasedAt: at(0))
        _ = machine.finished(acknowledgement(of: one))
        let first = written(machine.nextAcknowledgements(at: at(30))) ?? []
        #expect(machine.acknowledgementsFailed(first, at: at(31)) == .sleep(until: at(231)))
        _ = machine.finished(acknowledgement(of: two))
        guard case .write(let retried, _, let again, _) = machine.nextAcknowledgements(at: at(240)) else {
            Issue.record("the failed batch is written again")
            return
        }
        #expect(retried.map(\.deliveryID) == [one.id, two.id], "the failed one first, in order")
        #expect(again)
        let result = machine.acknowledgementsWritten([retried[0]], counted: 0, at: at(250))
        #expect(result.late == 1)
        #expect(result.then == .sleep(until: at(350)), "less than a batch: the next gathers for 100 ms")
        #expect(machine.counters.lateAcknowledgements == 1)
    }

    @Test func shutdownWithSendsInFlightWritesTheirOutcomesBeforeEnding() {
        var machine = machine()
        _ = machine.nextSend(at: at(0))
        let flying = [delivery(), delivery()]
        _ = machine.claimed(flying, asked: at(1), at: at(1))
        machine.shutdown()
        guard case .finish = machine.nextSend(at: at(2)) else {
            Issue.record("no claim after a shutdown")
            return
        }
        machine.sendingEnded()
        // The sends end after the send loop did; their outcomes are still written.
        for delivery in flying { _ = machine.finished(acknowledgement(of: delivery)) }
        let batch = written(machine.nextAcknowledgements(at: at(3))) ?? []
        #expect(batch.count == 2)
        #expect(machine.acknowledgementsWritten(batch, counted: 2, at: at(4)).then == .next)
        guard case .finish = machine.nextAcknowledgements(at: at(5)) else {
            Issue.record("then it ends")
            return
        }
        #expect(machine.counters.inFlight == 0)
    }

    @Test func upkeepRefreshesTheWindowEverySecondAndReportsGaugesEveryTenSeconds() {
        var machine = machine()
        let first = machine.tick(at: at(500))
        #expect(first.refreshWindow == false)
        #expect(first.gauges == [])
        machine.gaugesReported(at: at(500))
        #expect(machine.tick(at: at(1_000)).gauges == nil)
        #expect(machine.tick(at: at(5_000)).refreshWindow)
        #expect(machine.tick(at: at(10_500)).gauges == [])
    }

    /// Tables whose statistics are older than their rows are looked for at the first tick,
    /// then every 5 seconds from the last look.
    @Test func upkeepLooksForYoungTablesAtOnceThenEveryFiveSeconds() {
        var machine = machine()
        #expect(machine.tick(at: at(500)).checkStatistics)
        machine.statisticsChecked(at: at(600))
        #expect(machine.tick(at: at(1_000)).checkStatistics == false)
        #expect(machine.tick(at: at(5_500)).checkStatistics == false)
        #expect(machine.tick(at: at(5_600)).checkStatistics)
    }

    /// Leases of 3 s: renewed every second, counted from when the renewal was sent; one the
    /// renewal passed by (being acknowledged) keeps the lease it had.
    @Test func leasesAreRenewedEveryThirdOfALeaseFromWhenTheRenewalWasSent() {
        var machine = machine()
        #expect(machine.leasesToRenew(at: at(500)) == nil, "renewed a third of the lease after the start")
        let (kept, passedBy) = (delivery(), delivery())
        _ = machine.claimed([kept, passedBy], asked: at(800), at: at(900))
        #expect(Set(machine.leasesToRenew(at: at(1_000)) ?? []) == [kept.id, passedBy.id])
        // Sent at 1.0 s, answered at 2.5 s: the next is due a third of a lease after it was sent.
        machine.renewed([kept.id], sent: at(1_000))
        #expect(machine.leasesToRenew(at: at(1_999)) == nil)
        #expect(machine.leasesToRenew(at: at(2_000)) != nil)
        // Kept runs to 4.0 s; the one passed by still to 3.8 s (its claim was sent at 0.8 s).
        #expect(machine.mayStart(kept.id, at: at(2_900)))
        #expect(!machine.mayStart(passedBy.id, at: at(2_900)))
        #expect(machine.leasesInHand.count == 2, "upkeep reclaims neither")
    }

    /// A send begins only while a third of its lease is surely left; otherwise the delivery
    /// goes back unsent and is counted apart from a held-back provider's.
    @Test func aSendBeginsOnlyWhileAThirdOfItsLeaseIsLeft() {
        var machine = machine()
        let claimed = delivery()
        // The claim was sent at 0.1 s: its lease holds until 3.1 s at least, so a send may
        // begin until 2.1 s, however long the claim took to answer.
        _ = machine.claimed([claimed], asked: at(100), at: at(1_900))
        #expect(machine.mayStart(claimed.id, at: at(2_099)))
        #expect(!machine.mayStart(claimed.id, at: at(2_100)))
        // A fan-out transaction that began at 0.2 s and took 2.5 s hands over a lease too
        // short to begin with.
        let reserved = machine.reserveRoom()
        let handed = delivery()
        machine.handedOff([handed], reserved: reserved, leasedAt: at(200))
        #expect(!machine.mayStart(handed.id, at: at(2_700)))
        _ = machine.finished(acknowledgement(of: handed, .queued), leaseRanShort: true)
        #expect(machine.counters.leasesRanShort == 1)
        #expect(machine.counters.heldBack == 0 && machine.counters.retried == 0)
        // One never leased to this worker is never begun.
        #expect(!machine.mayStart(UUID(), at: at(0)))
    }

    /// Put back uncharged while the provider is held back: a delivery never sent is only held
    /// back; one whose send left and got no answer is also counted as unanswered, since it may
    /// have arrived and may arrive twice.
    @Test func aSendLeftWithoutAnAnswerIsCountedApartFromOneNeverSent() {
        var machine = machine()
        let (neverSent, unanswered, retried) = (delivery(), delivery(), delivery())
        _ = machine.claimed([neverSent, unanswered, retried], asked: at(0), at: at(1))
        var held = acknowledgement(of: neverSent, .queued)
        (held.spent, held.attempted) = (false, false)
        var timedOut = acknowledgement(of: unanswered, .queued)
        timedOut.spent = false
        _ = machine.finished(held)
        _ = machine.finished(timedOut)
        _ = machine.finished(acknowledgement(of: retried, .queued))
        #expect(machine.counters.heldBack == 2 && machine.counters.unanswered == 1 && machine.counters.retried == 1)
    }

    @Test func aHeldBackProviderIsLeftOutOfClaimsAndResumingHintsTheQueue() {
        var machine = machine()
        _ = machine.answered(.configurationFault("bad key"), by: .apns, probe: false, at: at(0))
        #expect(claim(machine.nextSend(at: at(1)))?.paused == [.apns])
        _ = machine.claimed([], asked: at(2), at: at(2))
        machine.outboxLooked(idle: true)
        guard case .write(_, let changes, _, _) = machine.nextAcknowledgements(at: at(3)) else {
            Issue.record("the pause is written")
            return
        }
        #expect(changes == [.heldBack(.apns, reason: "bad key", for: .seconds(30))])
        #expect(machine.admit(.apns, at: at(30_000)) == .probe)
        let (change, heldBack) = machine.answered(.answered, by: .apns, probe: true, at: at(30_001))
        #expect(change == .resumed(.apns))
        #expect(!heldBack)
        #expect(claim(machine.nextSend(at: at(30_002)))?.paused == [], "resumed: claim at once, for every provider")
    }
}
