import HeraldLoops
import HeraldStore
import Synchronization

/// Writes the webhooks' attempts as a group commit (docs/webhooks.md): a finished request hands
/// its result in, and whichever request finds no write under way writes every result queued
/// by then in one transaction, then the ones queued meanwhile, until none is left. Under load
/// one transaction records tens of attempts (it was one each: 1.7 ms of PostgreSQL's CPU an
/// event); alone, a result is written at once, as before.
///
/// A message's slot (its lease renewed, its place among the endpoint's 10 in flight) is given
/// back by `settled` once its record is written, or given up after four tries: its lease then
/// runs out and the message is sent again, as when its worker dies.
final class WebhookRecorder: Sendable {
    private struct State {
        var queued: [WebhookAttemptResult] = []
        var writing = false
    }

    private let state = Mutex(State())
    private let store: Store
    private let worker: String
    private let failures: FailureLog
    private let settled: @Sendable ([WebhookAttemptResult]) -> Void

    init(store: Store, worker: String, failures: FailureLog, settled: @escaping @Sendable ([WebhookAttemptResult]) -> Void) {
        self.store = store
        self.worker = worker
        self.failures = failures
        self.settled = settled
    }

    /// Records `result`: returns once it is written, or handed to the write under way (which
    /// writes it before it ends).
    func record(_ result: WebhookAttemptResult) async {
        let writes = state.withLock { state in
            state.queued.append(result)
            guard !state.writing else { return false }
            state.writing = true
            return true
        }
        guard writes else { return }
        while let batch = next() {
            await write(batch)
            settled(batch)
        }
    }

    /// The results queued, at most `batchLimit`; nil (and the writer's turn ends) when none is.
    private func next() -> [WebhookAttemptResult]? {
        state.withLock { state in
            guard !state.queued.isEmpty else {
                state.writing = false
                return nil
            }
            let batch = Array(state.queued.prefix(Self.batchLimit))
            state.queued.removeFirst(batch.count)
            return batch
        }
    }

    /// Written until it is, a few times (the leases, renewed meanwhile, keep anyone else from
    /// sending these messages).
    private func write(_ batch: [WebhookAttemptResult]) async {
        for attempt in 1...4 {
            do {
                try await store.recordWebhookAttempts(batch, worker: worker)
                failures.succeeded()
                return
            } catch {
                let inARow = failures.failed(error)
                guard attempt < 4, await RetryPause.wait(afterFailures: inARow) else { return }
            }
        }
    }

    /// The most attempts one transaction records.
    static let batchLimit = 500
}
