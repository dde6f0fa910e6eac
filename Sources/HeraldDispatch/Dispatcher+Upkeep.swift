import Foundation
import HeraldCore

/// Upkeep beside the sends: outcomes written in batches, leases renewed and reclaimed,
/// changed credentials and CA files read again.
extension Dispatcher {
    /// Performs the state machine's acknowledgement actions until it says to finish.
    func ackLoop() async {
        while true {
            switch state.withLock({ $0.nextAcknowledgements(at: .now) }) {
            case .write(let batch, let changes, let again, let finishing):
                for change in changes {
                    do {
                        switch change {
                        case .heldBack(let provider, let reason, let duration): try await queue.pause(provider, reason: reason, for: duration)
                        case .resumed(let provider): try await queue.resume(provider)
                        }
                        failures.pauses.succeeded()
                    } catch {
                        failures.pauses.failed(error)
                    }
                }
                let then: DispatchStateMachine.AfterWrite
                // After a failure only a shutdown cuts the wait short; after a write, the
                // next batch filling up does.
                var wakeUp = ackSignal
                do {
                    let counted = try await queue.acknowledge(batch, finishing: finishing, again: again)
                    failures.outcomes.succeeded()
                    let written = state.withLock { $0.acknowledgementsWritten(batch, counted: counted.count, at: .now) }
                    if !batch.isEmpty { sendSignal.signal() }
                    for acknowledgement in batch where counted.contains(acknowledgement.deliveryID) {
                        metrics.acknowledged(acknowledgement)
                    }
                    if written.late > 0 {
                        logger.warning("acknowledgements arrived after their lease passed on", metadata: ["count": "\(written.late)"])
                    }
                    then = written.then
                } catch {
                    failures.outcomes.failed(error)
                    then = state.withLock { $0.acknowledgementsFailed(batch, at: .now) }
                    wakeUp = stopSignal
                }
                switch then {
                case .next: continue
                case .sleep(let until): await wakeUp.wait(until: until)
                case .finish: return
                }
            case .sleep(let until):
                await ackSignal.wait(until: until)
            case .finish:
                return
            }
        }
    }

    /// Rotated credentials or CA files are read again (checked every second): a provider
    /// this worker held back gets a probe at once.
    func reloadChangedConfiguration() {
        let reloaded = gateway.reloadIfChanged()
        guard !reloaded.isEmpty else { return }
        var providers: Set<PushProvider> = []
        for reload in reloaded {
            switch reload {
            case .credentials(let provider):
                providers.insert(provider)
                logger.notice("read the \(provider.rawValue) credentials again: the file changed")
            case .certificateAuthorities:
                providers.formUnion(PushProvider.allCases)
                logger.notice("read HERALD_CA_FILE again: the file changed")
            }
        }
        state.withLock { $0.configurationReloaded(providers, at: .now) }
        sendSignal.signal()
    }

    /// Renews the leases this worker has in hand, on their own cadence: a tick of the rest of
    /// upkeep (the queue's depth, reclaiming) can take seconds on a loaded database, and a
    /// renewal behind it came late enough for a lease to run out in the middle of its send.
    /// It runs until the sends have ended, those in flight at a shutdown included.
    func leaseLoop() async {
        let every = state.withLock { $0.settings.upkeepEvery }
        while state.withLock({ $0.holdsLeases }) {
            await stopSignal.wait(timeout: every)
            guard let held = state.withLock({ $0.leasesToRenew(at: .now) }) else { continue }
            let sent = ContinuousClock.now
            do {
                let renewed = try await queue.renewLeases(held)
                state.withLock { $0.renewed(renewed, sent: sent) }
                failures.leases.succeeded()
            } catch {
                failures.leases.failed(error)
            }
        }
    }

    /// Performs the state machine's upkeep, a tick at a time.
    func maintenanceLoop() async {
        let every = state.withLock { $0.settings.upkeepEvery }
        while !isStopping {
            await stopSignal.wait(timeout: every)
            if isStopping { break }
            reloadChangedConfiguration()
            let upkeep = state.withLock { $0.tick(at: .now) }
            do {
                if upkeep.refreshWindow {
                    try await queue.refreshWindow()
                    state.withLock { $0.windowRefreshed(at: .now) }
                }
                if let heldBack = upkeep.gauges {
                    state.withLock { $0.gaugesReported(at: .now) }
                    metrics.providers(heldBack: heldBack)
                    metrics.queue(try await queue.depth())
                }
                // Not what this worker has in hand: those it renews (`leaseLoop`).
                let reclaimed = try await queue.reclaimExpiredLeases(except: state.withLock { $0.leasesInHand })
                if reclaimed > 0 {
                    logger.notice("reclaimed deliveries whose lease expired", metadata: ["count": "\(reclaimed)"])
                    hintQueue()
                }
                // Last: a failure here leaves the reclaiming above done.
                if upkeep.checkStatistics {
                    state.withLock { $0.statisticsChecked(at: .now) }
                    let analyzed = try await queue.analyzeYoungTables()
                    if !analyzed.isEmpty {
                        logger.info(
                            "analyzed tables that had changed more than they held", metadata: ["tables": "\(analyzed.joined(separator: ","))"])
                    }
                }
                failures.upkeep.succeeded()
            } catch {
                failures.upkeep.failed(error)
            }
        }
    }
}
