import Foundation
import HeraldCore
import HeraldPostgres
import HeraldPush
import HeraldStore
import HeraldTemplates
import Logging
import Synchronization

/// Claims events, fans them out into notifications and deliveries, sends the deliveries,
/// and records what became of each (DESIGN.md §6).
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
    private let gateway: any PushGateway
    private let fanOut: FanOut
    private let listenerConfiguration: PostgresConfiguration?
    private let logger: Logger
    private let eventSignal = Signal()
    private let sendSignal = Signal()
    private let ackSignal = Signal()
    private let stopSignal = Signal()
    private let state: Mutex<State>

    private struct State {
        var counters = Counters()
        /// Deliveries fan-out leased to this worker, waiting for the send loop (counted in
        /// `counters.inFlight` already).
        var handOff: [ClaimedDelivery] = []
        /// Something may be waiting in the delivery queue (a hint from another worker, a
        /// retry, a reclaimed lease): the send loop claims on its next turn.
        var queueHint = false
        var acknowledgements: [Acknowledgement] = []
        var stopping = false
        var sendingDone = false
        var fanOutIdle = false
        /// Which providers this worker holds back, and why.
        var gate: SendGate
        /// Pauses and resumptions not yet written (the acknowledgement loop writes them).
        var gateChanges: [SendGate.Change] = []
    }

    /// - Parameters:
    ///   - pool: connections that work as `herald_dispatcher` (see `poolConfiguration(for:)`).
    ///   - listenerConfiguration: where to LISTEN for the outbox hint; `nil` polls only.
    public init(
        pool: PostgresPool, listenerConfiguration: PostgresConfiguration?, gateway: any PushGateway, templates: TemplateCatalog,
        configuration: Configuration = Configuration(), logger: Logger
    ) {
        self.configuration = configuration
        self.state = Mutex(State(gate: SendGate(settings: SendGate.Settings(configurationPause: configuration.pauseOnConfigurationError))))
        self.queue = DeliveryQueue(pool: pool, worker: configuration.worker, lease: configuration.lease, tenants: configuration.tenants)
        self.gateway = gateway
        self.fanOut = FanOut(templates: templates)
        self.listenerConfiguration = listenerConfiguration
        var logger = logger
        logger[metadataKey: "worker"] = "\(configuration.worker)"
        self.logger = logger
    }

    /// Where a worker that fanned out more deliveries than it can send at once tells the
    /// others (the payload is the tenant's id).
    public static let deliveriesChannel = "herald_deliveries"

    /// The connection settings a dispatcher's pool needs: the same database, working as the
    /// `herald_dispatcher` role.
    public static func poolConfiguration(for configuration: PostgresConfiguration) -> PostgresConfiguration {
        configuration.with(sessionSetup: DatabaseRole.dispatcher.forSession)
    }

    /// A dispatcher on `store`'s database, with a pool of its own working as
    /// `herald_dispatcher`, the tenants' template overrides, and (with `listen`) the outbox
    /// hint; the pool is closed when `body` ends.
    public static func with<Result>(
        store: Store, listen: Bool, gateway: any PushGateway, configuration: Configuration = Configuration(), poolSize: Int = 3,
        logger: Logger, _ body: (Dispatcher) async throws -> Result
    ) async throws -> Result {
        let pool = PostgresPool(configuration: poolConfiguration(for: store.pool.configuration), size: poolSize, logger: logger)
        let dispatcher = Dispatcher(
            pool: pool, listenerConfiguration: listen ? store.pool.configuration : nil, gateway: gateway,
            templates: TemplateCatalog(overrides: StoredTemplateOverrides(store: store)), configuration: configuration, logger: logger)
        do {
            let result = try await body(dispatcher)
            await pool.close()
            return result
        } catch {
            await pool.close()
            throw error
        }
    }

    public var counters: Counters { state.withLock { $0.counters } }

    /// Deliveries still queued or being sent, and events not fanned out yet (for progress).
    public func remainingDeliveries() async throws -> Int {
        try await queue.remaining()
    }

    /// Asks a running `run(.forever)` to stop claiming, finish what is in flight and return.
    public func shutdown() {
        state.withLock { $0.stopping = true }
        stopSignal.signal()
        eventSignal.signal()
        sendSignal.signal()
        ackSignal.signal()
    }

    /// Tells the send loop the queue may hold work for it.
    private func hintQueue() {
        state.withLock { $0.queueHint = true }
        sendSignal.signal()
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    /// Works until `mode` says to stop. Cancelling the task stops it the way `shutdown()`
    /// does: in-flight sends finish and are acknowledged; leases on anything else are given
    /// back.
    public func run(_ mode: Mode = .forever) async throws {
        state.withLock {
            $0.stopping = false
            $0.sendingDone = false
            $0.fanOutIdle = false
        }
        let listener = listenerConfiguration.map {
            PostgresListener(configuration: $0, channels: [Store.outboxChannel, Self.deliveriesChannel], logger: logger)
        }
        defer { listener?.stop() }
        logger.info("dispatcher started", metadata: ["concurrency": "\(configuration.concurrency)"])
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                if let listener {
                    group.addTask { await self.listen(listener) }
                }
                group.addTask { await self.fanOutLoop() }
                group.addTask { await self.ackLoop() }
                group.addTask { await self.maintenanceLoop() }
                group.addTask {
                    await self.sendLoop(mode)
                    self.state.withLock { $0.sendingDone = true }
                    self.ackSignal.signal()
                    // Stop the helpers: the listener's stream ends when it is stopped.
                    self.shutdown()
                    listener?.stop()
                }
            }
        } onCancel: {
            self.shutdown()
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

    private func listen(_ listener: PostgresListener) async {
        for await event in listener.events {
            switch event {
            case .notification(let channel, _):
                if channel == Self.deliveriesChannel { hintQueue() } else { eventSignal.signal() }
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

    private var jitteredPoll: Duration {
        let seconds = configuration.pollInterval.timeInterval
        return .milliseconds(Int(seconds * 1000 * Double.random(in: 0.5...1.0)))
    }

    private func fanOutLoop() async {
        var failures = 0
        while !isStopping {
            do {
                let (events, _) = try await fanOutOnce(claiming: true)
                failures = 0
                if events == 0 {
                    state.withLock { $0.fanOutIdle = true }
                    await eventSignal.wait(timeout: jitteredPoll)
                    continue
                }
                let partial = events < configuration.eventBatch
                state.withLock { $0.fanOutIdle = partial }
                if partial {
                    // That was all there was: look again when told (a hint that came in the
                    // meantime is waiting) or at the next poll.
                    await eventSignal.wait(timeout: jitteredPoll)
                }
            } catch {
                failures += 1
                logger.error("fan-out failed; retrying", metadata: ["error": "\(error)"])
                await stopSignal.wait(timeout: LoopBackoff.after(failures: failures))
            }
        }
    }

    /// Fans out one batch of pending events without sending anything (benchmarks, tools).
    /// - Returns: how many events it fanned out; 0 when none were left.
    public func fanOutPending() async throws -> Int {
        try await fanOutOnce().events
    }

    /// Claims one batch of events and fans it out, in one transaction; an event with more
    /// recipients than `fanOutPart` is leased in that transaction and fanned out part by part
    /// in transactions of its own.
    /// - Parameter claiming: lease the new deliveries this worker has room for to itself and
    ///   hand them to the send loop (only while `run` is sending).
    /// - Returns: how many events, and how many deliveries they created.
    func fanOutOnce(claiming: Bool = false) async throws -> (events: Int, queued: Int) {
        let (events, queued, large) = try await withRoom(claiming) { room in try await fanOutTransaction(room: room) }
        state.withLock {
            $0.counters.eventsFannedOut += events - large.count
            $0.counters.deliveriesQueued += queued
        }
        var total = queued
        for event in large {
            total += try await fanOutLarge(event, claiming: claiming)
        }
        return (events, total)
    }

    /// Reserves room among the sends in flight (when `claiming`) for what `body` leases, and
    /// hands what it leased to the send loop.
    private func withRoom<Result>(
        _ claiming: Bool, _ body: (Int) async throws -> (Result, claimed: [ClaimedDelivery])
    ) async throws -> Result {
        let reserved = claiming
            ? state.withLock { state -> Int in
                let room = max(0, min(configuration.claimBatch, configuration.concurrency - state.counters.inFlight))
                state.counters.inFlight += room
                return room
            } : 0
        do {
            let (result, claimed) = try await body(reserved)
            state.withLock {
                $0.counters.inFlight -= reserved - claimed.count
                $0.handOff += claimed
            }
            if reserved > 0 { sendSignal.signal() }
            return result
        } catch {
            state.withLock { $0.counters.inFlight -= reserved }
            if reserved > 0 { sendSignal.signal() }
            throw error
        }
    }

    /// An event fanned out part by part, under this worker's lease on it.
    struct LargeEvent: Sendable {
        let event: ClaimedEvent
        let payload: FanOut.Payload
    }

    /// Locks a batch of events and fans it out, each tenant's share in that tenant's scope,
    /// and commits once. Large events are only leased here.
    private func fanOutTransaction(room: Int) async throws -> ((events: Int, queued: Int, large: [LargeEvent]), claimed: [ClaimedDelivery]) {
        try await queue.pool.withTransaction { connection in
            let events = try await queue.claimEvents(limit: configuration.eventBatch, on: connection)
            guard !events.isEmpty else { return ((0, 0, []), []) }
            var room = room
            var queued = 0
            var claimed: [ClaimedDelivery] = []
            var large: [LargeEvent] = []
            let decoder = JSONDecoder()
            for (tenant, events) in Dictionary(grouping: events, by: \.tenantID) {
                var readable: [(ClaimedEvent, FanOut.Payload)] = []
                var recipients: [EventRecipient] = []
                var conversations: Set<UUID> = []
                var done: [UUID] = []
                var leased: [UUID] = []
                for event in events {
                    do {
                        let payload = try FanOut.payload(of: event, decoder: decoder)
                        if payload.recipients.count > configuration.fanOutPart {
                            large.append(LargeEvent(event: event, payload: payload))
                            leased.append(event.id)
                            continue
                        }
                        recipients += payload.recipients
                        if let conversation = payload.conversation { conversations.insert(conversation) }
                        readable.append((event, payload))
                    } catch {
                        // A snapshot this version cannot read would block the queue forever;
                        // it is marked done, loudly, and left in the outbox for inspection.
                        logger.error("skipping an event that cannot be fanned out", metadata: ["event": "\(event.id)", "error": "\(error)"])
                    }
                    done.append(event.id)
                }
                connection.deferScript(Store.tenantScope(tenant))
                if !leased.isEmpty { try await queue.leaseEvents(leased, tenant: tenant, on: connection) }
                guard !done.isEmpty else { continue }
                let profiles = try await DeliveryQueue.profiles(recipients, tenant: tenant, on: connection)
                let chat = try await DeliveryQueue.participantStates(Array(conversations), tenant: tenant, on: connection)
                var drafts: [NotificationDraft] = []
                for (event, payload) in readable {
                    drafts += try await fanOut.drafts(for: event, payload, profiles: profiles, chat: chat)
                }
                let written = try await write(drafts, events: done, tenant: tenant, room: room, on: connection)
                room -= written.claimed.count
                queued += written.created
                claimed += written.claimed
            }
            return ((events.count, queued, large), claimed)
        }
    }

    /// Writes drafts (marking `events` done), leasing up to `room` of the new deliveries to
    /// this worker; wakes the other workers when more were queued than it took.
    private func write(
        _ drafts: [NotificationDraft], events: [UUID], tenant: UUID, room: Int, on connection: PostgresConnection
    ) async throws -> (created: Int, claimed: [ClaimedDelivery]) {
        let paused = state.withLock { $0.gate.heldBack(at: .now) }
        let claim = DeliveryQueue.FanOutClaim(worker: configuration.worker, lease: configuration.lease, room: room, paused: paused)
        let written = try await DeliveryQueue.write(
            drafts, events: events, tenant: tenant, deadline: configuration.retry.deadline, claim: claim, on: connection)
        if written.created > written.claimed.count {
            // More than this worker takes at once: wake the others to share it.
            try await connection.query("SELECT pg_notify(\(Self.deliveriesChannel), \(tenant.uuidString.lowercased()))")
        }
        return written
    }

    /// Fans out a large event `fanOutPart` recipients per transaction; the last part marks it
    /// done. Each part first checks that this worker still holds the event: if its lease
    /// lapsed and another worker took the event, that one carries on (a part written twice
    /// adds nothing: the write is idempotent). If a part fails, the worker's event leases are
    /// given back.
    /// - Returns: how many deliveries it created.
    private func fanOutLarge(_ large: LargeEvent, claiming: Bool) async throws -> Int {
        let event = large.event, tenant = event.tenantID
        let count = large.payload.recipients.count
        var created = 0
        do {
            for start in stride(from: 0, to: count, by: configuration.fanOutPart) {
                let part = start..<min(count, start + configuration.fanOutPart)
                let last = part.upperBound == count
                let written = try await withRoom(claiming) { room in
                    try await queue.pool.withTransaction { connection -> (Int?, claimed: [ClaimedDelivery]) in
                        guard try await queue.holdsEvent(event.id, tenant: tenant, on: connection) else { return (nil, []) }
                        connection.deferScript(Store.tenantScope(tenant))
                        let recipients = Array(large.payload.recipients[part])
                        let profiles = try await DeliveryQueue.profiles(recipients, tenant: tenant, on: connection)
                        let chat = try await DeliveryQueue.participantStates(
                            large.payload.conversation.map { [$0] } ?? [], people: recipients.map(\.id), tenant: tenant, on: connection)
                        let drafts = try await fanOut.drafts(for: event, large.payload, part: part, profiles: profiles, chat: chat)
                        if !last { try await queue.leaseEvents([event.id], tenant: tenant, on: connection) }
                        let written = try await write(drafts, events: last ? [event.id] : [], tenant: tenant, room: room, on: connection)
                        return (written.created, written.claimed)
                    }
                }
                guard let written else {
                    logger.info("a large event passed to another worker mid-fan-out", metadata: ["event": "\(event.id)"])
                    return created
                }
                state.withLock {
                    $0.counters.deliveriesQueued += written
                    if last { $0.counters.eventsFannedOut += 1 }
                }
                created += written
            }
            return created
        } catch {
            // Give back this event and any other large one of the batch not started yet: any
            // worker may take them at once rather than when their leases run out.
            try? await queue.releaseEventLeases()
            throw error
        }
    }

    private func sendLoop(_ mode: Mode) async {
        let concurrency = configuration.concurrency
        let refill = max(1, min(configuration.claimBatch, concurrency) / 4)
        let draining = if case .drain = mode { true } else { false }
        // How soon to look at the queue again after a claim found nothing.
        let recheck: Duration = draining ? .milliseconds(50) : configuration.pollInterval / 4
        var lastEmptyClaim: ContinuousClock.Instant?
        var failures = 0
        await withDiscardingTaskGroup { group in
            func start(_ deliveries: [ClaimedDelivery]) {
                for delivery in deliveries {
                    group.addTask {
                        await self.deliver(delivery)
                        self.finished(refill: refill)
                    }
                }
            }
            while !isStopping {
                // What fan-out leased to this worker goes first (already counted in flight).
                let (handedOff, hinted, inFlight) = state.withLock { state in
                    defer { state.handOff = [] }
                    return (state.handOff, state.queueHint, state.counters.inFlight)
                }
                start(handedOff)
                let room = concurrency - inFlight
                let mayClaim = room >= refill && (hinted || lastEmptyClaim.map { $0.duration(to: .now) >= recheck } ?? true)
                if mayClaim {
                    state.withLock { $0.queueHint = false }
                    let claimed: [ClaimedDelivery]
                    do {
                        let heldBack = state.withLock { $0.gate.heldBack(at: .now) }
                        claimed = try await queue.claimDeliveries(limit: min(room, configuration.claimBatch), paused: heldBack)
                        failures = 0
                    } catch {
                        failures += 1
                        logger.error("claiming deliveries failed; retrying", metadata: ["error": "\(error)"])
                        await stopSignal.wait(timeout: LoopBackoff.after(failures: failures))
                        continue
                    }
                    lastEmptyClaim = claimed.isEmpty ? .now : nil
                    if !claimed.isEmpty {
                        state.withLock { $0.counters.inFlight += claimed.count }
                        start(claimed)
                        continue
                    }
                }
                if !handedOff.isEmpty { continue }
                if inFlight == 0, case .drain(let horizon) = mode, await drainIsComplete(horizon: horizon) { break }
                // Wait for a hint, a hand-off, room to free up, or the next look at the queue.
                let wait: Duration = room < refill ? .seconds(1) : (inFlight > 0 || draining ? recheck : jitteredPoll)
                await sendSignal.wait(timeout: wait)
            }
        }
    }

    /// A send finished: wake the send loop when that makes room for a claim, or (draining)
    /// when nothing is left in flight.
    private func finished(refill: Int) {
        let wake = state.withLock { state -> Bool in
            state.counters.inFlight -= 1
            return configuration.concurrency - state.counters.inFlight == refill || state.counters.inFlight == 0
        }
        if wake { sendSignal.signal() }
    }

    /// Nothing to fan out, nothing unacknowledged, nothing due soon.
    private func drainIsComplete(horizon: Duration) async -> Bool {
        let (idle, acknowledged, paused) = state.withLock { ($0.fanOutIdle, $0.acknowledgements.isEmpty, $0.gate.pausedForConfiguration(at: .now)) }
        guard idle, acknowledged else { return false }
        do {
            // What waits for this worker's configuration to be fixed does not keep a drain
            // going; what waits for an endpoint to come back does.
            return try await !queue.hasWork(within: horizon, paused: paused)
        } catch {
            logger.warning("cannot check for remaining work", metadata: ["error": "\(error)"])
            return false
        }
    }

    // MARK: One delivery

    private func deliver(_ delivery: ClaimedDelivery) async {
        let started = Date()
        func acknowledgement(
            _ status: Acknowledgement.Status, _ outcome: Acknowledgement.Outcome, next: Date? = nil, http: Int? = nil,
            messageID: String? = nil, error: String? = nil, spent: Bool = true, attempted: Bool = true
        ) -> Acknowledgement {
            Acknowledgement(
                tenantID: delivery.tenantID, deliveryID: delivery.id, deviceID: delivery.deviceID, attempt: delivery.attempt,
                status: status, outcome: outcome, nextAttemptAt: next, httpStatus: http, messageID: messageID, error: error,
                startedAt: started, finishedAt: Date(), spent: spent, attempted: attempted)
        }
        guard delivery.deviceActive else {
            record(acknowledgement(.cancelled, .cancelled, error: "the device was removed or deactivated before sending"))
            return
        }
        guard delivery.claimedAt < delivery.deadlineAt else {
            record(acknowledgement(.expired, .cancelled, error: "the delivery deadline passed before it could be sent"))
            return
        }
        let verdict = state.withLock { $0.gate.admit(delivery.provider, at: .now) }
        if case .holdBack(let reason) = verdict {
            // Unsent: back to the queue as it was, for any worker that is not holding back.
            record(acknowledgement(.queued, .retry, next: Date(), error: reason, spent: false, attempted: false))
            return
        }
        let notification = PushNotification(
            token: delivery.token, message: RenderedMessage(title: delivery.title, body: delivery.body), imageURL: delivery.imageURL,
            data: delivery.data, badge: delivery.badge, sound: delivery.sound, threadID: delivery.threadID)
        let answer: ProviderAnswer
        do {
            answer = try await gateway.send(notification, provider: delivery.provider, app: delivery.app, expiration: delivery.deadlineAt)
        } catch {
            // Cancelled mid-send: whether the provider got it is unknown; it goes back to
            // the queue (at worst, one duplicate).
            if verdict == .probe { state.withLock { $0.gate.abandonProbe(delivery.provider, at: .now) } }
            record(acknowledgement(.queued, .retry, next: Date(), error: "interrupted: \(error)"))
            return
        }
        let http = answer.httpStatus
        let heldBack = gate(Settlement.gateAnswer(for: answer.outcome, http: http), delivery.provider, probe: verdict == .probe)
        var random = SystemRandomNumberGenerator()
        let settled = Settlement.of(
            answer.outcome, http: http, heldBack: heldBack, attempt: delivery.attempt, firstAttempt: delivery.firstAttemptAt, now: Date(),
            retry: configuration.retry, random: &random)
        record(acknowledgement(
            settled.status, settled.outcome, next: settled.next, http: http, messageID: settled.messageID, error: settled.error,
            spent: settled.spent))
    }

    /// Tells the gate how a send ended; logs and queues (for the acknowledgement loop) what
    /// that changed.
    /// - Returns: whether the provider is held back now.
    @discardableResult
    private func gate(_ answer: SendGate.Answer, _ provider: PushProvider, probe: Bool) -> Bool {
        let (change, heldBack) = state.withLock { state in
            let change = state.gate.record(answer, for: provider, probe: probe, at: .now)
            if let change { state.gateChanges.append(change) }
            return (change, state.gate.isHeldBack(provider, at: .now))
        }
        switch change {
        case .heldBack(let provider, let reason, let duration)?:
            logger.critical(
                "\(provider.rawValue) sending is PAUSED on this worker; its deliveries stay queued for other workers and a probe",
                metadata: ["provider": "\(provider.rawValue)", "reason": "\(reason)", "retry_in": "\(duration)"])
            ackSignal.signal()
        case .resumed(let provider)?:
            logger.notice("\(provider.rawValue) sending works again")
            ackSignal.signal()
            hintQueue()
        case nil:
            break
        }
        return heldBack
    }

    private func record(_ acknowledgement: Acknowledgement) {
        let flush = state.withLock { state -> Bool in
            state.acknowledgements.append(acknowledgement)
            switch acknowledgement.status {
            case .sent: state.counters.sent += 1
            case .queued:
                if acknowledgement.outcome == .configurationError {
                    state.counters.pausedForConfiguration += 1
                } else if !acknowledgement.spent {
                    state.counters.heldBack += 1
                } else {
                    state.counters.retried += 1
                }
            case .deadToken: state.counters.deadTokens += 1
            case .failed: state.counters.failed += 1
            case .expired: state.counters.expired += 1
            case .cancelled: state.counters.cancelled += 1
            case .sending: break  // an acknowledgement ends a send; never "sending"
            }
            return state.acknowledgements.count >= configuration.claimBatch
        }
        if flush { ackSignal.signal() }
    }

    // MARK: Acknowledgements and leases

    private func ackLoop() async {
        var failures = 0
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
                    let counted = try await queue.acknowledge(batch)
                    failures = 0
                    let late = batch.count - counted.count
                    if late > 0 {
                        state.withLock { $0.counters.lateAcknowledgements += late }
                        logger.warning("acknowledgements arrived after their lease passed on", metadata: ["count": "\(late)"])
                    }
                    if batch.contains(where: { $0.status == .queued }) { hintQueue() }
                } catch {
                    failures += 1
                    // Keep them: the next round tries again, in order.
                    state.withLock { $0.acknowledgements = batch + $0.acknowledgements }
                    logger.error("recording delivery outcomes failed; retrying", metadata: ["error": "\(error)"])
                    if failures > 50, done { return }
                    await stopSignal.wait(timeout: LoopBackoff.after(failures: failures))
                }
                continue
            }
            if done { return }
            // Outcomes are written in batches: a full batch at once, otherwise every 25 ms.
            await ackSignal.wait(timeout: .milliseconds(25))
        }
    }

    /// Rotated credentials or CA files are read again (checked every second): a provider
    /// this worker held back gets a probe at once.
    private func reloadChangedConfiguration() {
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

    private func maintenanceLoop() async {
        let renewEvery = configuration.lease / 3
        var lastRenewal = ContinuousClock.now
        while !isStopping {
            await stopSignal.wait(timeout: min(.seconds(1), renewEvery))
            if isStopping { break }
            reloadChangedConfiguration()
            do {
                if lastRenewal.duration(to: .now) >= renewEvery {
                    try await queue.renewLeases()
                    lastRenewal = .now
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

