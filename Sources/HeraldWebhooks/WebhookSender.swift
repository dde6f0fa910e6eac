import CoreMetrics
import Foundation
import HeraldHTTP
import HeraldStore
import Logging
import Synchronization

/// The webhooks' worker (DESIGN §18), run beside the dispatcher by every `herald worker` and
/// `herald serve --worker`: it numbers the durable feed (as the live channel's sequencer does,
/// one at a time across processes), turns new rows into messages for the endpoints that
/// subscribe (`WebhookEvents`), and sends due messages, at most `maxInFlight` at once and
/// `WebhookQueue.perEndpoint` to one endpoint across every worker, so that one slow or dead
/// endpoint never holds back another's. Woken by the feed's NOTIFYs, and every second.
public final class WebhookSender: Sendable {
    public struct Configuration: Sendable {
        public var policy: WebhookDestinationPolicy
        /// Requests in flight from this worker.
        public var maxInFlight: Int
        /// Attempts and settled messages older than this are removed (history's retention).
        public var retention: Duration

        public init(policy: WebhookDestinationPolicy, maxInFlight: Int = 100, retention: Duration = .seconds(90 * 86_400)) {
            self.policy = policy
            self.maxInFlight = maxInFlight
            self.retention = retention
        }
    }

    private let store: Store
    private let client: HTTPClient
    private let configuration: Configuration
    private let worker: String
    private let logger: Logger
    private let metrics = WebhookMetrics()
    /// Where the live feed's pending rows begin, as this sender's sequencing found.
    private let sequencerFloor = QueueFloor()
    private let inFlight = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    /// - Parameter client: a client of the webhooks' own (its connections are all checked
    ///   ones: a connection another request opened is never reused for a webhook).
    public init(store: Store, client: HTTPClient, configuration: Configuration, worker: String, logger: Logger) {
        self.store = store
        self.client = client
        self.configuration = configuration
        self.worker = worker
        self.logger = logger
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Runs until `shutdown()`; the requests in flight then finish and are recorded, and the
    /// leases of messages claimed but not sent are given back.
    public func run() async {
        let listener = store.feedWakes(logger: logger)
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await _ in listener.wakes { self.wake.yield() }
            }
            group.addTask {
                var tick = 0
                // (Cancelled, the sleep returns at once: the loop ends rather than spin.)
                while !self.stopping.load(ordering: .relaxed), !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    tick += 1
                    self.wake.yield()
                    if tick % 15 == 0 { await self.upkeep(prune: tick % 3_600 == 15) }
                }
                listener.stop()
                self.wake.finish()
            }
            for await _ in wakes {
                // Wake-ups that come meanwhile (every transition NOTIFYs) are one round: at 200
                // events a second, at most 50 rounds instead of 200, each a few transactions.
                try? await Task.sleep(for: Self.gathering)
                if stopping.load(ordering: .relaxed) { break }
                await feed()
                for message in await claim() {
                    group.addTask { await self.deliver(message) }
                }
            }
        }
        do { try await store.releaseWebhookLeases(worker: worker) } catch {
            logger.warning("cannot give back webhook leases", metadata: ["error": "\(error)"])
        }
    }

    /// Stops claiming; `run()` returns once what is in flight is recorded.
    public func shutdown() {
        stopping.store(true, ordering: .relaxed)
        wake.yield()
    }

    /// Numbers the feed and writes the messages of new rows, until none are left.
    /// - Returns: how many feed rows were read.
    @discardableResult
    public func feed() async -> Int {
        var read = 0
        do {
            try await store.sequenceLive(floor: sequencerFloor)
            while true {
                let rows = try await store.feedWebhooks(limit: Self.feedBatch) { rows, subscriptions in
                    try WebhookEvents.drafts(rows, subscriptions)
                }
                read += rows
                if rows < Self.feedBatch { break }
            }
        } catch {
            logger.warning("webhook feeder failed", metadata: ["error": "\(error)"])
        }
        return read
    }

    /// Sends what is due now and waits for the answers (for tests and the bench).
    /// - Returns: how many attempts were made.
    @discardableResult
    public func sendDue() async -> Int {
        let messages = await claim()
        await withDiscardingTaskGroup { group in
            for message in messages { group.addTask { await self.deliver(message) } }
        }
        return messages.count
    }

    private func claim() async -> [ClaimedWebhookMessage] {
        let room = configuration.maxInFlight - inFlight.load(ordering: .relaxed)
        guard room > 0 else { return [] }
        do {
            let messages = try await store.claimWebhookMessages(worker: worker, limit: room)
            inFlight.add(messages.count, ordering: .relaxed)
            return messages
        } catch {
            logger.warning("cannot claim webhook messages", metadata: ["error": "\(error)"])
            return []
        }
    }

    private func deliver(_ message: ClaimedWebhookMessage) async {
        defer {
            inFlight.subtract(1, ordering: .relaxed)
            wake.yield()
        }
        let started = Date()
        var answer: HTTPResponse?
        var failure: String?
        do {
            answer = try await client.send(try WebhookDelivery.request(for: message, policy: configuration.policy, now: started))
        } catch let error as HTTPClientError {
            failure = error.kind == .refused ? "refused: \(error.message)" : "\(error.kind): \(error.message)"
        } catch {
            failure = "refused: \(error)"
        }
        let result = WebhookDelivery.result(of: message, answer: answer, failure: failure, startedAt: started, finishedAt: Date())
        metrics.record(result, seconds: result.at.timeIntervalSince(started))
        // Recorded until it is: the lease keeps anyone else from sending it meanwhile, and a
        // record that never lands leaves the message to be sent again when the lease runs out.
        for pause in [0.2, 1, 5, 0] {
            do {
                try await store.recordWebhookAttempts([result], worker: worker)
                return
            } catch {
                logger.warning("cannot record a webhook attempt", metadata: ["error": "\(error)"])
                guard pause > 0 else { return }
                try? await Task.sleep(for: .seconds(pause))
            }
        }
    }

    private func upkeep(prune: Bool) async {
        do {
            let reclaimed = try await store.reclaimExpiredWebhookLeases()
            if reclaimed > 0 { logger.notice("webhook messages queued again after their lease ran out", metadata: ["count": "\(reclaimed)"]) }
            if prune { try await store.pruneWebhookRecords(olderThan: configuration.retention) }
        } catch {
            logger.warning("webhook upkeep failed", metadata: ["error": "\(error)"])
        }
    }

    static let feedBatch = 1_000
    /// How long a round waits after its wake-up, for the ones that follow.
    static let gathering: Duration = .milliseconds(20)
}

/// `herald_webhook_attempts_total{outcome}` (delivered, retry, disabled) and
/// `herald_webhook_duration_seconds`.
struct WebhookMetrics: Sendable {
    private let attempts: [String: Counter]
    private let duration = CoreMetrics.Timer(label: "herald_webhook_duration_seconds", preferredDisplayUnit: .seconds)

    init() {
        attempts = Dictionary(
            uniqueKeysWithValues: ["delivered", "retry", "disabled"].map {
                ($0, Counter(label: "herald_webhook_attempts_total", dimensions: [("outcome", $0)]))
            })
    }

    func record(_ result: WebhookAttemptResult, seconds: TimeInterval) {
        let outcome =
            switch result.outcome {
            case .delivered: "delivered"
            case .retry: "retry"
            case .disable: "disabled"
            }
        attempts[outcome]?.increment()
        duration.recordNanoseconds(Int64(max(0, seconds) * 1e9))
    }
}
