import Foundation
import Synchronization

/// What the emulator remembers: issued access tokens, accepted messages, faults, counters.
///
/// A lock, not an actor: each send reads the faults, checks the token, draws a fault and
/// records the message, and as an actor that was four hops a request between the request's
/// task and the actor, each a job queued on the emulator's threads (and often a thread woken).
/// Every access is a few instructions under the lock.
final class EmulatorState: Sendable {
    private struct Storage {
        var faults: EmulatorConfiguration.Faults
        var messages: [RecordedMessage] = []
        var accessTokens: Set<String> = []
        var accepted = 0
        var rejected = 0
        /// Webhook requests received, and their distinct `webhook-id`s (the receiver's).
        var webhooks = 0
        var webhookIDs: Set<String> = []
        var random = SystemRandomNumberGenerator()
    }

    private let storage: Mutex<Storage>

    /// Keep only token and time of each message (benchmarks: hundreds of thousands of them).
    private let lean: Bool

    init(faults: EmulatorConfiguration.Faults, lean: Bool = false) {
        storage = Mutex(Storage(faults: faults))
        self.lean = lean
    }

    var faults: EmulatorConfiguration.Faults { storage.withLock { $0.faults } }
    var messages: [RecordedMessage] { storage.withLock { $0.messages } }
    var accepted: Int { storage.withLock { $0.accepted } }
    var rejected: Int { storage.withLock { $0.rejected } }
    /// Webhook requests received, and how many of them repeated a `webhook-id` seen before.
    var webhooks: (received: Int, repeated: Int) { storage.withLock { ($0.webhooks, $0.webhooks - $0.webhookIDs.count) } }

    func recordWebhook(id: String) {
        storage.withLock {
            $0.webhooks += 1
            $0.webhookIDs.insert(id)
        }
    }

    func issueAccessToken() -> String {
        let token = "emu-" + UUID().lowercasedString
        storage.withLock { _ = $0.accessTokens.insert(token) }
        return token
    }

    func isValid(accessToken: String) -> Bool { storage.withLock { $0.accessTokens.contains(accessToken) } }

    /// Forgets every access token, as if they all expired (tests of the 401 path).
    func revokeAccessTokens() { storage.withLock { $0.accessTokens.removeAll() } }

    func record(_ message: RecordedMessage) {
        let kept = lean ? message.lean : message
        storage.withLock {
            $0.messages.append(kept)
            $0.accepted += 1
        }
    }

    func countRejection() { storage.withLock { $0.rejected += 1 } }

    func clear() {
        storage.withLock {
            $0.messages.removeAll()
            $0.accepted = 0
            $0.rejected = 0
            $0.webhooks = 0
            $0.webhookIDs.removeAll()
        }
    }

    func setFaults(_ faults: EmulatorConfiguration.Faults) { storage.withLock { $0.faults = faults } }

    /// Which injected failure, if any, this send gets.
    enum Injected { case none, unavailable, throttled }

    func drawFault(_ faults: EmulatorConfiguration.Faults) -> Injected {
        storage.withLock { storage in
            let roll = Double.random(in: 0..<1, using: &storage.random)
            if roll < faults.unavailableShare { return .unavailable }
            if roll < faults.unavailableShare + faults.throttledShare { return .throttled }
            return .none
        }
    }
}
