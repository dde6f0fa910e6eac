import CoreMetrics
import Foundation
import HeraldCore
import HeraldHTTP
import HeraldLoops
import HeraldStore
import Logging
import Synchronization

/// The webhooks' worker (docs/webhooks.md), run beside the dispatcher by every `herald worker` and
/// `herald serve --worker`: it numbers the durable feed (as the live channel's sequencer does,
/// one at a time across processes), turns new rows into messages for the endpoints that
/// subscribe (`WebhookEvents`), and sends due messages, at most `maxInFlight` at once and
/// `WebhookQueue.perEndpoint` to one endpoint across every worker, so that one slow or dead
/// endpoint never holds back another's. Woken by the feed's NOTIFYs, and every second.
///
/// Messages are leased for `WebhookQueue.lease` (seconds), renewed every second while their
/// request is in flight (which its own 10 s limit bounds): a worker that dies leaves its
/// messages to the next claim within seconds, as the dispatcher's deliveries are.
public final class WebhookSender: Sendable {
    public struct Configuration: Sendable {
        public var policy: DestinationPolicy
        /// Requests in flight from this worker.
        public var maxInFlight: Int
        /// Attempts and settled messages older than this are removed (history's retention).
        public var retention: Duration

        public init(policy: DestinationPolicy, maxInFlight: Int = 100, retention: Duration = .seconds(90 * 86_400)) {
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
    /// Where this sender's feeder rounds reached (the stored cursor is written less often).
    private let feedFloor = WebhookFeedFloor()
    /// The messages claimed and not yet recorded.
    private let slots = WebhookSlots()
    private let recorder: WebhookRecorder
    /// Whether the next round reads the feed: a NOTIFY or the ticker asked (an answer that
    /// freed a slot only asks for a claim).
    private let feedAsked = Atomic<Bool>(true)
    private let stopping = Atomic<Bool>(false)
    let failures: Failures
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
        let failures = Failures(logger: logger)
        self.failures = failures
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (self.wakes, self.wake) = (wakes, wake)
        recorder = WebhookRecorder(store: store, worker: worker, failures: failures.records) { [slots] results in
            slots.release(results)
            wake.yield()
        }
    }

    /// Each loop's failures, told once a streak (`FailureLog`).
    struct Failures: Sendable {
        let feed: FailureLog
        let claims: FailureLog
        let records: FailureLog
        let leases: FailureLog
        let upkeep: FailureLog

        init(logger: Logger) {
            feed = FailureLog("webhook feeder", logger: logger)
            claims = FailureLog("claiming webhook messages", logger: logger)
            records = FailureLog("recording webhook attempts", logger: logger)
            leases = FailureLog("renewing webhook leases", logger: logger)
            upkeep = FailureLog("webhook upkeep", logger: logger)
        }

        var all: [FailureLog] { [feed, claims, records, leases, upkeep] }
    }

    /// Failures in a row of each loop now (for tests).
    var failuresInARow: [Int] { failures.all.map(\.failures) }

    /// Runs until `shutdown()` or the task is cancelled; the requests in flight then finish
    /// and are recorded, and the leases of messages claimed but not sent are given back.
    public func run() async {
        // As the dispatcher's: the work runs in a task of its own, out of reach of this one's
        // cancellation, which only asks it to stop, so that the attempts in flight are still
        // recorded and the leases given back.
        let work = Task { await self.work() }
        await withTaskCancellationHandler {
            await work.value
        } onCancel: {
            self.shutdown()
        }
    }

    private func work() async {
        let listener = store.feedWakes()
        let (stopped, stop) = AsyncStream.makeStream(of: Void.self)
        await withDiscardingTaskGroup { group in
            // The wake-ups and the ticker, until the rounds end.
            group.addTask {
                await withTaskGroup(of: Void.self) { helpers in
                    helpers.addTask {
                        for await _ in listener.wakes { self.askToFeed() }
                    }
                    helpers.addTask {
                        var tick = 0
                        while true {
                            do { try await Task.sleep(for: .seconds(1)) } catch { return }
                            tick += 1
                            self.askToFeed()
                            await self.renewLeases()
                            await self.upkeep(prune: tick % 3_600 == 15, statistics: tick % Self.statisticsEvery == 1)
                        }
                    }
                    for await _ in stopped {}
                    helpers.cancelAll()
                }
            }
            var gathering = Self.gathering
            for await _ in wakes {
                // Wake-ups that come meanwhile (every transition NOTIFYs, every answer frees a
                // slot) are one round: at 200 events a second, at most 50 rounds instead of 200,
                // each a few transactions. While messages are there to send, a round follows the
                // answers closely: an endpoint's 10 slots are not left idle for 20 ms.
                do { try await Task.sleep(for: gathering) } catch { break }
                if stopping.load(ordering: .relaxed) { break }
                let fed = feedAsked.exchange(false, ordering: .relaxed) ? await feed() : 0
                let claimed = await claim()
                for message in claimed {
                    group.addTask { await self.deliver(message) }
                }
                gathering = Self.gathering(claimed: claimed.count, inFlight: slots.inFlight)
                // A round that failed waits before the next (the ticker wakes it every second).
                if fed == nil || claimed.isEmpty && failures.claims.failures > 0 {
                    let inARow = max(failures.feed.failures, failures.claims.failures)
                    guard await RetryPause.wait(afterFailures: inARow) else { break }
                }
            }
            stop.finish()
            listener.stop()
        }
        do { try await store.releaseWebhookLeases(worker: worker) } catch {
            logger.warning("cannot give back webhook leases", metadata: ["error": "\(error)"])
        }
    }

    private func askToFeed() {
        feedAsked.store(true, ordering: .relaxed)
        wake.yield()
    }

    /// Stops claiming; `run()` returns once what is in flight is recorded.
    public func shutdown() {
        stopping.store(true, ordering: .relaxed)
        wake.yield()
    }

    /// Numbers the feed and writes the messages of new rows, until none are left.
    /// - Returns: how many feed rows were read; nil when it failed.
    @discardableResult
    public func feed() async -> Int? {
        var read = 0
        do {
            try await store.sequenceLive(floor: sequencerFloor)
            while true {
                let rows = try await store.feedWebhooks(limit: Self.feedBatch, floor: feedFloor) { rows, subscriptions in
                    try WebhookEvents.drafts(rows, subscriptions)
                }
                read += rows
                if rows < Self.feedBatch { break }
            }
            failures.feed.succeeded()
            return read
        } catch {
            if !Task.isCancelled { failures.feed.failed(error) }
            return nil
        }
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
        let room = configuration.maxInFlight - slots.inFlight
        guard room > 0 else { return [] }
        do {
            let messages = try await store.claimWebhookMessages(worker: worker, limit: room)
            failures.claims.succeeded()
            slots.take(messages)
            return messages
        } catch {
            if !Task.isCancelled { failures.claims.failed(error) }
            return []
        }
    }

    private func deliver(_ message: ClaimedWebhookMessage) async {
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
        await recorder.record(result)
    }

    /// Renews the leases of the messages whose requests are in flight.
    private func renewLeases() async {
        let held = slots.keys
        guard !held.isEmpty else { return }
        do {
            try await store.renewWebhookLeases(held, worker: worker)
            failures.leases.succeeded()
        } catch {
            if !Task.isCancelled { failures.leases.failed(error) }
        }
    }

    /// Queues again what a dead worker held (every second: its leases are short), and prunes.
    /// - Parameter statistics: look for tables whose statistics are older than their rows
    ///   (`Store.analyzeYoungTables`): a sender may run where no dispatcher does (the bench), and
    ///   its claims' plans on a new database were made while the queue was empty.
    private func upkeep(prune: Bool, statistics: Bool) async {
        do {
            let reclaimed = try await store.reclaimExpiredWebhookLeases()
            if reclaimed > 0 { logger.notice("webhook messages queued again after their lease ran out", metadata: ["count": "\(reclaimed)"]) }
            if prune { try await store.pruneWebhookRecords(olderThan: configuration.retention) }
            // Last: a failure here leaves the reclaiming above done.
            if statistics { try await store.analyzeYoungTables() }
            failures.upkeep.succeeded()
        } catch {
            if !Task.isCancelled { failures.upkeep.failed(error) }
        }
    }

    /// How long the next round waits after its wake-up: long when nothing is to be sent, so
    /// that many wake-ups (every transition NOTIFYs) are one round; short while anything was
    /// claimed or is in flight, for an answer, once recorded, frees a slot of its endpoint (in
    /// the database, not before) and the round its record wakes must claim the next message at
    /// once. A claim that found nothing because every slot was still held had waited 20 ms: ten
    /// messages a round, about 350 a second on a new machine whatever the receiver's speed.
    static func gathering(claimed: Int, inFlight: Int) -> Duration {
        claimed == 0 && inFlight == 0 ? gathering : busyGathering
    }

    static let feedBatch = 1_000
    /// Every how many seconds of the ticker the statistics are looked at.
    static let statisticsEvery = Int(Store.youngTablesCheckEvery.components.seconds)
    /// How long a round waits after its wake-up, for the ones that follow.
    static let gathering: Duration = .milliseconds(20)
    /// How long a round waits while the last one found messages to send.
    static let busyGathering: Duration = .milliseconds(2)
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
