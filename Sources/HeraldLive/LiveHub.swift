import Foundation
import HeraldCore
import HeraldStore
import Logging
import Synchronization

/// The live channel of one `herald serve` (docs/live-protocol.md): the runner of its
/// `LiveStateMachine`. It reads the shared feed from PostgreSQL and writes each socket what its
/// person may see; every lock it takes is one event of the machine, and what the machine
/// answers (`LiveAction`) it does outside the lock, in one place (`perform`). Servers share
/// nothing but the database: NOTIFY wakes them, the feed is the data.
public final class LiveHub: Sendable {
    let store: Store
    public let settings: LiveSettings
    let logger: Logger
    /// This server, in `live_servers` (its presence rows go with it).
    let server = UUID.v7()
    let machine: Mutex<LiveStateMachine<LiveSocket>>
    /// The loops' store: a pool of their own while `run` runs, so that the feed's rounds and
    /// upkeep never take the connections requests wait for.
    let loopStore = Mutex<Store?>(nil)
    var background: Store { loopStore.withLock { $0 } ?? store }
    let metrics = LiveMetrics()
    /// Each loop's failures, told once a streak.
    let failures: LiveFailures
    /// The time the machine's events are given (a test may move it).
    let clock: @Sendable () -> Date
    /// Asks for a round (new feed rows, or a socket to catch up).
    let roundWake = LiveWake()
    /// Asks for presence to be recorded.
    let presenceWake = LiveWake()
    /// Asks for the presence changes heard to be told.
    let presenceHeardWake = LiveWake()
    /// Asks for the presence subscriptions to be checked against the access policy again where
    /// someone left a team or a conversation (`recheckSubscriptions`).
    let recheckWake = LiveWake()
    /// The credential's share of requests, as the REST API counts them: nil when one more may
    /// be made now, else how long until it may. A `presence.subscribe` looks up to 100 people
    /// up, as `GET /v1/presence` does, and takes from the same share.
    let requestBudget: @Sendable (_ credential: UUID, _ kind: CredentialKind) -> Duration?

    /// - Parameters:
    ///   - requestBudget: the REST API's rate limits (none by default).
    ///   - clock: the time the state machine's events are given.
    public init(
        store: Store, settings: LiveSettings = LiveSettings(), logger: Logger,
        requestBudget: @escaping @Sendable (_ credential: UUID, _ kind: CredentialKind) -> Duration? = { _, _ in nil },
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.clock = clock
        self.store = store
        self.settings = settings
        self.logger = logger
        self.requestBudget = requestBudget
        self.failures = LiveFailures(logger: logger)
        self.machine = Mutex(LiveStateMachine(settings: settings))
    }

    /// Asks the loop for a round (new feed rows, or a socket to catch up).
    func wake() {
        roundWake.wake()
    }

    // MARK: Admission

    /// Whether `person` may open one more socket here (before the upgrade).
    public func admission(of person: UUID) -> LiveAdmission {
        machine.withLock { $0.admission(of: person) }
    }

    /// The newest position and the pruned horizon, for a socket about to open.
    public func positions() async throws -> (head: Int64, horizon: Int64) {
        try await store.livePositions()
    }

    /// The socket of `plan`, over `connection`: not registered yet (`register`), so that
    /// the connection's handlers can be put in place first.
    public func socket(for plan: LivePlan, on connection: any LiveConnection) -> LiveSocket {
        let id = machine.withLock { $0.nextID() }
        return LiveSocket(id: id, plan: plan, after: plan.start.position, connection: connection, settings: settings, metrics: metrics)
    }

    /// The socket's connection is up: registered, its `hello` (and `resync`) sent, a round asked
    /// for its catch-up; its person is recorded online in the background if it is their first here.
    public func register(_ socket: LiveSocket, plan: LivePlan) {
        let actions = machine.withLock { $0.opened(socket.id, socket, tenant: plan.tenant, person: plan.person.id, device: plan.device) }
        metrics.sockets.increment()
        let start = plan.start
        if plan.after != nil { (start.resync ? metrics.resyncs : metrics.resumes).increment() }
        socket.send(
            LiveFrame.text(LiveFrame.Hello(person: plan.person.email, cursor: LiveFrame.cursor(start.position), heartbeat: settings.heartbeat)))
        if start.resync {
            socket.send(
                LiveFrame.text(
                    LiveFrame.Resync(
                        reason: "the cursor is older than what is kept (or unknown here): reload with the REST API, then use this hello's cursor")))
        }
        performSoon(actions)
    }

    /// A socket's connection is gone: unregistered; its person's presence is to be recorded
    /// again (offline if it was their last socket here), and what it held in the database let go.
    public func closed(_ socket: LiveSocket) {
        let actions = machine.withLock { $0.closed(socket.id) }
        metrics.sockets.decrement()
        performSoon(actions)
    }

    /// Every socket now, for the loops.
    var sockets: [LiveSocket] { machine.withLock { $0.sockets } }
}

/// Whether one more socket may open.
public enum LiveAdmission: Sendable, Equatable {
    case admitted
    /// The server holds as many as it may (or is stopping).
    case serverFull
    /// The person holds as many as they may.
    case personFull(limit: Int)
}
