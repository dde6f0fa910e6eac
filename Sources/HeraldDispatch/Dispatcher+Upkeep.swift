import Foundation
import HeraldCore

/// Upkeep beside the sends: outcomes written in batches, leases renewed and reclaimed,
/// changed credentials and CA files read again.
extension Dispatcher {
    func ackLoop() async {
        var failures = 0
        // Whether what is pending was sent before without an answer: it may have been written.
        var again = false
        while true {
            let (batch, changes, done) = state.withLock { state in
                defer {
                    state.acknowledgements = []
                    state.gateChanges = []
                }
                return (state.acknowledgements, state.gateChanges, state.sendingDone)
            }
            for change in changes {
                do {
                    switch change {
                    case .heldBack(let provider, let reason, let duration): try await queue.pause(provider, reason: reason, for: duration)
                    case .resumed(let provider): try await queue.resume(provider)
                    }
                } catch {
                    logger.error("could not record a provider pause or resumption", metadata: ["error": "\(error)"])
                }
            }
            if !batch.isEmpty {
                do {
                    let counted = try await queue.acknowledge(batch, again: again)
                    failures = 0
                    again = false
                    // Written: their slots are free for the next sends.
                    state.withLock { state in
                        state.counters.inFlight -= batch.count
                        for acknowledgement in batch { state.held.remove(acknowledgement.deliveryID) }
                    }
                    sendSignal.signal()
                    for acknowledgement in batch where counted.contains(acknowledgement.deliveryID) {
                        metrics.acknowledged(acknowledgement)
                    }
                    let late = batch.count - counted.count
                    if late > 0 {
                        state.withLock { $0.counters.lateAcknowledgements += late }
                        logger.warning("acknowledgements arrived after their lease passed on", metadata: ["count": "\(late)"])
                    }
                    if batch.contains(where: { $0.status == .queued }) { hintQueue() }
                    // After a full batch the next may be full already.
                    if batch.count >= configuration.acknowledgementFlush || done { continue }
                } catch {
                    failures += 1
                    again = true
                    // Keep them: the next round tries again, in order.
                    state.withLock { $0.acknowledgements = batch + $0.acknowledgements }
                    logger.error("recording delivery outcomes failed; retrying", metadata: ["error": "\(error)"])
                    if failures > 50, done { return }
                    await stopSignal.wait(timeout: LoopBackoff.after(failures: failures))
                    continue
                }
            }
            if done { return }
            // Outcomes are written in batches: a full batch (`acknowledgementFlush`) at once;
            // otherwise, after a write, the next one gathers for 100 ms (every statement costs
            // its plan and round trip whatever its size), and while idle one waits at most 25 ms.
            await ackSignal.wait(timeout: batch.isEmpty ? .milliseconds(25) : .milliseconds(100))
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
        state.withLock { state in
            for provider in providers { state.gate.probeSoon(provider, at: .now) }
        }
        hintQueue()
    }

    /// How often a worker reports the queue's depth and its held-back providers.
    static let gaugesEvery: Duration = .seconds(10)
    /// How often a worker reads again where live deliveries begin (`LiveWindow`).
    static let windowEvery: Duration = .seconds(5)

    func maintenanceLoop() async {
        let renewEvery = configuration.lease / 3
        var lastRenewal = ContinuousClock.now
        var lastGauges: ContinuousClock.Instant?
        var lastWindow = ContinuousClock.now
        while !isStopping {
            await stopSignal.wait(timeout: min(.seconds(1), renewEvery))
            if isStopping { break }
            reloadChangedConfiguration()
            do {
                if lastRenewal.duration(to: .now) >= renewEvery {
                    try await queue.renewLeases(state.withLock { Array($0.held) })
                    lastRenewal = .now
                }
                if lastWindow.duration(to: .now) >= Self.windowEvery {
                    try await queue.refreshWindow()
                    lastWindow = .now
                }
                if lastGauges.map({ $0.duration(to: .now) >= Self.gaugesEvery }) ?? true {
                    lastGauges = .now
                    metrics.providers(heldBack: state.withLock { $0.gate.heldBack(at: .now) })
                    metrics.queue(try await queue.depth())
                }
                let reclaimed = try await queue.reclaimExpiredLeases()
                if reclaimed > 0 {
                    logger.notice("reclaimed deliveries whose lease expired", metadata: ["count": "\(reclaimed)"])
                    hintQueue()
                }
            } catch {
                logger.warning("lease upkeep failed; retrying", metadata: ["error": "\(error)"])
            }
        }
    }
}
