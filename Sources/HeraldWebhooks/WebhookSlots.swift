import HeraldStore
import Synchronization

/// A webhooks' sender's messages in flight: claimed, and not yet recorded. Their leases are
/// the only ones renewed, and their count is what a claim leaves room for.
final class WebhookSlots: Sendable {
    private let held = Mutex<Set<WebhookMessageKey>>([])
    private let count = Atomic<Int>(0)

    /// Messages in flight now.
    var inFlight: Int { count.load(ordering: .relaxed) }

    /// Their keys, for renewing their leases.
    var keys: [WebhookMessageKey] { held.withLock { Array($0) } }

    func take(_ messages: [ClaimedWebhookMessage]) {
        count.add(messages.count, ordering: .relaxed)
        held.withLock { $0.formUnion(messages.map(\.key)) }
    }

    func release(_ results: [WebhookAttemptResult]) {
        held.withLock { held in
            for result in results { held.remove(result.message.key) }
        }
        count.subtract(results.count, ordering: .relaxed)
    }
}
