import Foundation
import HeraldCore
import HeraldPush
import HeraldStore
import HeraldTemplates
import Logging
import Synchronization

/// Claims events, fans them out into notifications and deliveries, sends the deliveries,
/// and records what became of each (docs/architecture.md).
///
/// Any number of dispatchers, in any number of processes, may share one database: every
/// piece of work is claimed under a lease with `SKIP LOCKED` row locks, renewed while in
/// flight, and an acknowledgement counts only while its lease holds. A dispatcher killed at
/// any moment loses nothing: its leases expire and another (or its restart) takes the work.
public final class Dispatcher: Sendable {
    /// How `run` ends.
    public enum Mode: Sendable {
        /// Until the task is cancelled (or `shutdown()`): then in-flight sends finish and
        /// are recorded, and nothing new is claimed.
        case forever
        /// Until nothing is left to do: no event to fan out, nothing being sent, and no
        /// delivery due within `horizon` (retries due later stay queued for a worker).
        case drain(horizon: Duration)
    }

    public let configuration: Configuration
    let queue: DeliveryQueue
    let gateway: any PushGateway
    let fanOut: FanOut
    /// The store on this dispatcher's pool: fires due timers (in each tenant's scope) and keeps history's partitions.
    let store: Store
    /// Whether `run` LISTENs for hints (otherwise it polls only).
    let listens: Bool
    let metrics = DispatchMetrics()
    let logger: Logger
    /// Each loop's failures, told once a streak.
    let failures: DispatchFailures
    let eventSignal = Signal()
    let sendSignal = Signal()
    let ackSignal = Signal()
    let stopSignal = Signal()
    /// Every decision of the loops below: they perform its actions and report how they ended.
    let state: Mutex<DispatchStateMachine>
    /// The key email unsubscribe links are signed with, once read (`emailLinks()`).
    let linkKey = Mutex<EmailLinks?>(nil)

    /// - Parameters:
    ///   - store: a store on connections that work as `herald_dispatcher`
    ///     (`Store.withDispatcherPool`).
    ///   - listen: LISTEN for the outbox hint; otherwise it polls only.
    public init(
        store: Store, listen: Bool, gateway: any PushGateway, templates: TemplateCatalog, configuration: Configuration = Configuration(),
        logger: Logger
    ) {
        self.configuration = configuration
        self.state = Mutex(DispatchStateMachine(settings: DispatchStateMachine.Settings(configuration: configuration)))
        self.queue = DeliveryQueue(store: store, worker: configuration.worker, lease: configuration.lease, tenants: configuration.tenants)
        self.gateway = gateway
        self.fanOut = FanOut(templates: templates)
        self.store = store
        self.listens = listen
        var logger = logger
        logger[metadataKey: "worker"] = "\(configuration.worker)"
        self.logger = logger
        self.failures = DispatchFailures(logger: logger)
    }

    /// A dispatcher on `store`'s database, with a pool of its own working as
    /// `herald_dispatcher`, the tenants' template overrides, and (with `listen`) the outbox
    /// hint; the pool is closed when `body` ends. The pool has `poolSize` connections, by
    /// default one for each part of a large event written at once, one for claims and one
    /// for outcomes.
    public static func with<Result>(
        store: Store, listen: Bool, gateway: any PushGateway, configuration: Configuration = Configuration(), poolSize: Int? = nil,
        logger: Logger, _ body: (Dispatcher) async throws -> Result
    ) async throws -> Result {
        try await store.withDispatcherPool(size: poolSize ?? configuration.fanOutConcurrency + 2) { dispatcherStore in
            let dispatcher = Dispatcher(
                store: dispatcherStore, listen: listen, gateway: gateway,
                templates: TemplateCatalog(overrides: StoredTemplateOverrides(store: store)), configuration: configuration, logger: logger)
            return try await body(dispatcher)
        }
    }

    public var counters: Counters { state.withLock { $0.counters } }

    /// Deliveries still queued or being sent, and events not fanned out yet (for progress).
    public func remainingDeliveries() async throws -> Int {
        try await queue.remaining()
    }

    /// Asks a running `run(.forever)` to stop claiming, finish what is in flight and return.
    public func shutdown() {
        state.withLock { $0.shutdown() }
        stopSignal.signal()
        eventSignal.signal()
        sendSignal.signal()
        ackSignal.signal()
    }

    /// Tells the send loop the queue may hold work for it.
    func hintQueue() {
        state.withLock { $0.hintQueue() }
        sendSignal.signal()
    }

    /// Whether it was asked to stop (or was never started since).
    public var isStopping: Bool { state.withLock { $0.stopping } }

    /// Works until `mode` says to stop. Cancelling the task stops it the way `shutdown()`
    /// does: in-flight sends finish and are acknowledged; leases on anything else are given
    /// back.
    public func run(_ mode: Mode = .forever) async throws {
        // The loops run in a task of their own, out of reach of this one's cancellation, so
        // that what they owe the database when they stop (the outcomes of sends in flight, the
        // leases given back) can still be written; the cancellation only asks them to stop
        // (after `start`, which it would otherwise undo).
        let drain: Duration? = if case .drain(let horizon) = mode { horizon } else { nil }
        state.withLock { $0.start(drain: drain, at: .now) }
        let work = Task { await self.work() }
        await withTaskCancellationHandler {
            await work.value
        } onCancel: {
            self.shutdown()
        }
    }

    private func work() async {
        let listener = listens ? QueueListener(store: store, logger: logger) : nil
        defer { listener?.stop() }
        do {
            try await queue.refreshWindow()
        } catch {
            logger.warning("could not read where live deliveries begin; looking in every week until it can", metadata: ["error": "\(error)"])
        }
        logger.info("dispatcher started", metadata: ["concurrency": "\(configuration.concurrency)"])
        await withDiscardingTaskGroup { group in
            if let listener {
                group.addTask { await self.listen(listener) }
            }
            group.addTask { await self.fanOutLoop() }
            group.addTask { await self.ackLoop() }
            group.addTask { await self.maintenanceLoop() }
            group.addTask { await self.leaseLoop() }
            group.addTask { await self.timerLoop() }
            group.addTask { await self.historyLoop() }
            group.addTask {
                await self.sendLoop()
                self.state.withLock { $0.sendingEnded() }
                self.ackSignal.signal()
                // Stop the helpers: the listener's stream ends when it is stopped.
                self.shutdown()
                listener?.stop()
            }
        }
        // Whatever is still claimed was not sent: give it back at once rather than at expiry.
        do {
            try await queue.releaseLeases()
        } catch {
            logger.warning("could not release leases; they expire by themselves", metadata: ["error": "\(error)"])
        }
        logger.info("dispatcher stopped", metadata: ["sent": "\(counters.sent)"])
    }

    // MARK: Loops

    func listen(_ listener: QueueListener) async {
        for await event in listener.events {
            switch event {
            case .deliveries: hintQueue()
            case .events: eventSignal.signal()
            case .connected(reconnected: true):
                // A reconnect may have missed hints: look for work as if one had arrived.
                eventSignal.signal()
                hintQueue()
            case .connected(reconnected: false):
                break
            case .disconnected(let reason):
                logger.warning("lost the outbox listener; polling until it is back", metadata: ["reason": "\(reason)"])
            }
            if isStopping { break }
        }
    }

    var jitteredPoll: Duration {
        configuration.pollInterval * Double.random(in: 0.5...1.0)
    }

    /// Performs the state machine's send actions until it says to finish.
    func sendLoop() async {
        await withDiscardingTaskGroup { group in
            var next = state.withLock { $0.nextSend(at: .now, jitter: .random(in: 0.5...1.0)) }
            while true {
                switch next {
                case .start(let deliveries):
                    // Each slot is given back when its outcome is written (`ackLoop`), not
                    // when the send ends.
                    for delivery in deliveries { group.addTask { await self.deliver(delivery) } }
                case .claim(let limit, let paused):
                    do {
                        let asked = ContinuousClock.now
                        let claimed = try await queue.claimDeliveries(limit: limit, paused: paused)
                        failures.claims.succeeded()
                        let start = state.withLock { $0.claimed(claimed, asked: asked, at: .now) }
                        for delivery in start { group.addTask { await self.deliver(delivery) } }
                    } catch {
                        failures.claims.failed(error)
                        // Or sooner, when the listener is back (so is the database) or at shutdown.
                        await sendSignal.wait(until: state.withLock { $0.claimFailed(at: .now) })
                    }
                case .checkDrain(let horizon, let paused):
                    let complete = await drainIsComplete(horizon: horizon, paused: paused)
                    next = state.withLock { $0.drainChecked(complete: complete, at: .now) }
                    continue
                case .sleep(let until):
                    await sendSignal.wait(until: until)
                case .finish:
                    return
                }
                next = state.withLock { $0.nextSend(at: .now, jitter: .random(in: 0.5...1.0)) }
            }
        }
    }

    /// Whether nothing is due within `horizon` (what waits for the `paused` providers'
    /// configuration to be fixed does not keep a drain going; what waits for an endpoint to
    /// come back does), and no timer or digest either.
    func drainIsComplete(horizon: Duration, paused: [PushProvider]) async -> Bool {
        do {
            defer { failures.drain.succeeded() }
            // Timers and digests first: firing one, or closing one, writes queue work in the same
            // transaction, so work the timer loop adds after these looks was seen due by them;
            // looked at after the queue, a digest closed between the two looks was in neither.
            if try await store.hasTimers(dueWithin: horizon, tenants: configuration.tenants) { return false }
            if try await store.hasDigests(dueWithin: horizon, tenants: configuration.tenants) { return false }
            return try await !queue.hasWork(within: horizon, paused: paused)
        } catch {
            failures.drain.failed(error)
            return false
        }
    }

    // MARK: One delivery

    func deliver(_ delivery: ClaimedDelivery) async {
        let started = Date()
        func acknowledgement(
            _ status: Acknowledgement.Status, _ outcome: Acknowledgement.Outcome, next: Date? = nil, http: Int? = nil,
            messageID: String? = nil, error: String? = nil, spent: Bool = true, attempted: Bool = true, at finished: Date = Date()
        ) -> Acknowledgement {
            Acknowledgement(
                tenantID: delivery.tenantID, deliveryID: delivery.id, notificationID: delivery.notificationID, deviceID: delivery.deviceID,
                provider: delivery.provider,
                attempt: delivery.attempt, leaseID: delivery.leaseID,
                status: status, outcome: outcome, nextAttemptAt: next, httpStatus: http, messageID: messageID, error: error,
                startedAt: started, finishedAt: finished, spent: spent, attempted: attempted, attemptID: delivery.id.v7Sibling())
        }
        guard delivery.deviceActive else {
            record(acknowledgement(.cancelled, .cancelled, error: "the device was removed or deactivated before sending"))
            return
        }
        guard delivery.claimedAt < delivery.deadlineAt else {
            record(acknowledgement(.expired, .cancelled, error: "the delivery deadline passed before it could be sent"))
            return
        }
        guard state.withLock({ $0.mayStart(delivery.id, at: .now) }) else {
            // Unsent, uncharged: back to the queue, to be leased afresh by the next claim.
            record(
                acknowledgement(.queued, .retry, next: Date(), error: "too little of its lease was left to send it", spent: false, attempted: false),
                leaseRanShort: true)
            return
        }
        let verdict = state.withLock { $0.admit(delivery.provider, at: .now) }
        if case .holdBack(let reason) = verdict {
            // Unsent: back to the queue as it was, for any worker that is not holding back.
            record(acknowledgement(.queued, .retry, next: Date(), error: reason, spent: false, attempted: false))
            return
        }
        var notification = PushNotification(
            token: delivery.token, address: delivery.address, content: delivery.content, collapseID: delivery.content.collapseKey,
            subscription: delivery.subscription)
        if delivery.provider == .email {
            do {
                guard let recipient = try await mailRecipient(for: delivery) else {
                    if verdict == .probe { state.withLock { $0.abandonProbe(delivery.provider, at: .now) } }
                    record(acknowledgement(.cancelled, .cancelled, error: "the address is no longer a person's", spent: false))
                    return
                }
                notification.mail = recipient
            } catch {
                if verdict == .probe { state.withLock { $0.abandonProbe(delivery.provider, at: .now) } }
                record(
                    acknowledgement(.queued, .retry, next: Date().addingTimeInterval(5), error: "the email's recipient could not be read: \(error)"))
                return
            }
        }
        let answer: ProviderAnswer
        let sendStarted = ContinuousClock.now
        do {
            answer = try await gateway.send(notification, provider: delivery.provider, app: delivery.app, expiration: delivery.deadlineAt)
        } catch {
            // Cancelled mid-send: whether the provider got it is unknown; it goes back to
            // the queue (at worst, one duplicate).
            if verdict == .probe { state.withLock { $0.abandonProbe(delivery.provider, at: .now) } }
            record(acknowledgement(.queued, .retry, next: Date(), error: "interrupted: \(error)"))
            return
        }
        metrics.answered(delivery.provider, took: sendStarted.duration(to: .now))
        let http = answer.httpStatus
        let heldBack = gate(
            Settlement.gateAnswer(for: answer.outcome, http: http, gate: gateway.gate(of: delivery.provider)), delivery.provider,
            probe: verdict == .probe)
        var random = SystemRandomNumberGenerator()
        // One instant for the answer: the retry is due a Retry-After from when the attempt is
        // recorded as finished, not from a moment before it (on a loaded machine the two
        // differed by milliseconds, and the next attempt could start that much early).
        let answered = Date()
        let settled = Settlement.of(
            answer.outcome, http: http, heldBack: heldBack, attempt: delivery.attempt, firstAttempt: delivery.firstAttemptAt, now: answered,
            retry: configuration.retry, unansweredBefore: delivery.unansweredBefore, random: &random)
        if settled.status == .unanswered {
            logger.warning(
                "\(delivery.provider.rawValue) answered neither send of a push; it is recorded unanswered, not sent a third time",
                metadata: ["delivery": "\(delivery.id.lowercasedString)", "reason": "\(settled.error ?? "")"])
        }
        if settled.status == .sent { metrics.sent(eventAt: delivery.eventAt, now: Date()) }
        if http == 413 {
            // Herald keeps every request under the providers' limits: a refusal as too large is its defect.
            logger.error(
                "\(delivery.provider.rawValue) refused a push as too large; not retried",
                metadata: ["delivery": "\(delivery.id.lowercasedString)", "reason": "\(settled.error ?? "")"])
        }
        record(
            acknowledgement(
                settled.status, settled.outcome, next: settled.next, http: http, messageID: settled.messageID, error: settled.error,
                spent: settled.spent, at: answered))
    }

    /// Tells the gate how a send ended; logs and queues (for the acknowledgement loop) what
    /// that changed.
    /// - Returns: whether the provider is held back now.
    @discardableResult
    func gate(_ answer: SendGate.Answer, _ provider: PushProvider, probe: Bool) -> Bool {
        let (change, heldBack) = state.withLock { $0.answered(answer, by: provider, probe: probe, at: .now) }
        switch change {
        case .heldBack(let provider, let reason, let duration)?:
            logger.critical(
                "\(provider.rawValue) sending is PAUSED on this worker; its deliveries stay queued for other workers and a probe",
                metadata: ["provider": "\(provider.rawValue)", "reason": "\(reason)", "retry_in": "\(duration)"])
            ackSignal.signal()
        case .resumed(let provider)?:
            logger.notice("\(provider.rawValue) sending works again")
            ackSignal.signal()
            sendSignal.signal()
        case nil:
            break
        }
        return heldBack
    }

    func record(_ acknowledgement: Acknowledgement, leaseRanShort: Bool = false) {
        if state.withLock({ $0.finished(acknowledgement, leaseRanShort: leaseRanShort) }) { ackSignal.signal() }
    }
}
