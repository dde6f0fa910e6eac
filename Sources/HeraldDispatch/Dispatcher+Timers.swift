import Foundation
import HeraldLoops
import HeraldStore

/// Reminders, escalations and deadline notices: every worker looks for due timers about once
/// a second and fires them (docs/notifications.md); their events then fan out like any other.
/// In the same look it closes the digests that are due.
extension Dispatcher {
    /// How many due timers one look fires before it looks again.
    static let timerBatch = 100

    func timerLoop() async {
        // While batches come back full (a burst), each look starts where the last one ended.
        var burst: TimerCursor?
        while !isStopping {
            var full = false
            var inARow = 0
            do {
                let (firings, next) = try await store.fireDueTimers(
                    at: Date(), limit: Self.timerBatch, tenants: configuration.tenants, after: burst)
                failures.timers.succeeded()
                full = firings.count >= Self.timerBatch
                burst = full ? next : nil
                var fired = 0
                var skipped = 0
                for firing in firings {
                    switch firing {
                    case .fired: fired += 1
                    case .skipped: skipped += 1
                    case .notDue, .postponed: break
                    }
                }
                metrics.firedTimers(fired)
                if fired + skipped > 0 {
                    state.withLock { $0.timersFired(fired, skipped: skipped) }
                    logger.info("fired due timers", metadata: ["fired": "\(fired)", "skipped": "\(skipped)"])
                }
                if fired > 0 { eventSignal.signal() }
                full = try await closeDueDigests() || full
            } catch {
                burst = nil
                inARow = failures.timers.failed(error)
            }
            if full, inARow == 0 { continue }
            await stopSignal.wait(timeout: inARow > 0 ? RetryPause.after(failures: inARow) : jitteredPoll)
        }
    }

    /// Closes the digests due now (docs/notifications.md), each once across all workers; their
    /// pushes are then sent like any other.
    /// - Returns: whether there may be more due at once.
    func closeDueDigests() async throws -> Bool {
        let closings = try await store.closeDueDigests(
            at: Date(), limit: Self.timerBatch, deadline: configuration.retry.deadline, templates: fanOut.templates,
            tenants: configuration.tenants, email: gateway.sends(.email))
        var sent = 0
        for closing in closings {
            if case .sent = closing { sent += 1 }
        }
        if !closings.isEmpty {
            logger.info("closed due digests", metadata: ["closed": "\(closings.count)", "sent": "\(sent)"])
        }
        if sent > 0 { hintQueue() }
        return closings.count >= Self.timerBatch
    }
}
