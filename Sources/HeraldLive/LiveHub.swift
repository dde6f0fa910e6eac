import Foundation
import HeraldCore
import HeraldStore
import Logging
import NIOCore
import Synchronization

/// The live channel of one `herald serve` (docs/live-protocol.md): its sockets, who they speak for, and
/// the loop that reads the shared feed from PostgreSQL and writes each socket what its person
/// may see. Servers share nothing but the database: NOTIFY wakes them, the feed is the data.
public final class LiveHub: Sendable {
    struct Registry {
        var next: UInt64 = 1
        var sockets: [UInt64: LiveSocket] = [:]
        var byPerson: [UUID: Set<UInt64>] = [:]
        /// Up to where every joined socket has been given the feed.
        var cursor: Int64 = 0
        var started = false
        var stopping = false
        /// People whose first socket here opened or whose last one closed since their presence
        /// was last recorded (`recordPresence`).
        var presenceDirty: Set<LivePersonKey> = []
        /// People this server has recorded online.
        var presenceRecorded: Set<LivePersonKey> = []
        /// Presence changes on any server, not yet told to the sockets here.
        var presenceHeard: [LivePresenceChange] = []
        /// Sockets opened and closed since freed memory was last handed back (`trimIfChurned`).
        var churn = 0
        /// Sockets not yet caught up from their cursors: the rounds' frames are not theirs yet.
        var joining: Set<UInt64> = []
        /// The joined sockets by tenant and person, kept while no socket joins or closes (so a
        /// round with thousands of sockets does not sort them all again).
        var joinedCache: [UUID: LiveTenantSockets]?

        /// The joined sockets by tenant and person.
        mutating func joinedView() -> [UUID: LiveTenantSockets] {
            if let joinedCache { return joinedCache }
            var view: [UUID: LiveTenantSockets] = [:]
            for (id, socket) in sockets where !joining.contains(id) {
                view[socket.tenant.id, default: LiveTenantSockets(tenant: socket.tenant)].people[socket.person.id, default: []].append(socket)
            }
            joinedCache = view
            return view
        }

        /// A socket caught up: from now on the rounds' frames are its.
        mutating func join(_ id: UInt64) {
            guard joining.remove(id) != nil, sockets[id] != nil else { return }
            joinedCache = nil
        }
    }

    let store: Store
    let settings: LiveSettings
    let logger: Logger
    /// This server, in `live_servers` (its presence rows go with it).
    let server = UUID.v7()
    let registry = Mutex(Registry())
    /// The loops' store: a pool of their own while `run` runs, so that the feed's rounds and
    /// upkeep never take the connections requests wait for.
    let loopStore = Mutex<Store?>(nil)
    var background: Store { loopStore.withLock { $0 } ?? store }
    let metrics = LiveMetrics()
    /// Each loop's failures, told once a streak.
    let failures: LiveFailures
    /// Typing told at most once every few seconds per person and conversation.
    let typingThrottle = Mutex(TypingThrottle())
    /// The database's time of the last credentials check (`closeRevoked`).
    let credentialsCheckedAt = Mutex<Date?>(nil)
    /// Asks for a round (new feed rows, or a socket to catch up).
    let roundWake = LiveWake()
    /// Asks for presence to be recorded (`presenceDirty`).
    let presenceWake = LiveWake()
    /// Asks for the presence changes heard to be told (`presenceHeard`).
    let presenceHeardWake = LiveWake()

    public init(store: Store, settings: LiveSettings = LiveSettings(), logger: Logger) {
        self.store = store
        self.settings = settings
        self.logger = logger
        self.failures = LiveFailures(logger: logger)
    }

    /// Asks the loop for a round (new feed rows, or a socket to catch up).
    func wake() {
        roundWake.wake()
    }

    // MARK: Admission

    /// Refuses a socket over its person's or this server's share, before the upgrade.
    func checkRoom(for person: Person) throws {
        let (mine, all, stopping) = registry.withLock { ($0.byPerson[person.id]?.count ?? 0, $0.sockets.count, $0.stopping) }
        if stopping || all >= settings.perServer {
            var problem = Problem(
                .serviceUnavailable, "Live channel full", detail: "this server holds as many sockets as it may; try another, or again soon")
            problem.headers[.retryAfter] = "5"
            throw problem
        }
        if mine >= settings.perPerson {
            throw Problem(
                .tooManyRequests, "Too many sockets",
                detail: "\(person.email) holds \(settings.perPerson) live sockets already; close one first")
        }
    }

    /// The newest position and the pruned horizon, for a socket about to open.
    func positions() async throws -> (head: Int64, horizon: Int64) {
        try await store.livePositions()
    }

    /// Makes `channel`, just upgraded, the socket of `plan`: registered, its frames handled on
    /// the channel's event loop, its `hello` (and `resync`) sent; the person is recorded online
    /// in the background. Runs on the channel's event loop, before any frame of the app is read.
    func open(_ plan: LivePlan, on channel: any Channel) throws -> LiveSocket {
        var start = plan.head
        var resync = false
        if let after = plan.after {
            if after < plan.horizon || after > plan.head {
                resync = true
                metrics.resyncs.increment()
            } else {
                start = after
                metrics.resumes.increment()
            }
        }
        let id = registry.withLock { registry -> UInt64 in
            defer { registry.next += 1 }
            return registry.next
        }
        let socket = LiveSocket(
            id: id, tenant: plan.tenant, person: plan.person, credentialID: plan.credentialID, consoleSession: plan.consoleSession,
            device: plan.device, after: start,
            channel: channel, settings: settings, metrics: metrics)
        let handler = LiveFrameHandler(
            socket: socket, settings: settings,
            receive: { [self] text in await receive(text, from: socket) },
            ended: { [self] in closed(socket) })
        try channel.pipeline.syncOperations.addHandler(handler)
        // Gone before the handler was there to hear it: nothing to register.
        guard channel.isActive else { throw ChannelError.ioOnClosedChannel }
        let first = registry.withLock { registry -> Bool in
            registry.sockets[socket.id] = socket
            registry.churn += 1
            registry.joining.insert(socket.id)
            registry.byPerson[plan.person.id, default: []].insert(socket.id)
            guard registry.byPerson[plan.person.id]?.count == 1 else { return false }
            registry.presenceDirty.insert(LivePersonKey(tenant: plan.tenant.id, person: plan.person.id))
            return true
        }
        metrics.sockets.increment()
        if first { presenceWake.wake() }
        socket.send(LiveFrame.text(LiveFrame.Hello(person: plan.person.email, cursor: LiveFrame.cursor(start), heartbeat: settings.heartbeat)))
        if resync {
            socket.send(
                LiveFrame.text(
                    LiveFrame.Resync(
                        reason: "the cursor is older than what is kept (or unknown here): reload with the REST API, then use this hello's cursor")))
        }
        wake()
        return socket
    }

    /// A socket's connection is gone: unregistered; its person's presence is to be recorded
    /// again (offline if it was their last socket here), and what it held in the database let go.
    private func closed(_ socket: LiveSocket) {
        let (last, othersViewing) = registry.withLock { registry -> (Bool, Bool) in
            registry.sockets[socket.id] = nil
            registry.churn += 1
            if registry.joining.remove(socket.id) == nil { registry.joinedCache = nil }
            registry.byPerson[socket.person.id]?.remove(socket.id)
            let remaining = registry.byPerson[socket.person.id] ?? []
            if remaining.isEmpty {
                registry.byPerson[socket.person.id] = nil
                registry.presenceDirty.insert(LivePersonKey(tenant: socket.tenant.id, person: socket.person.id))
            }
            let viewing = socket.viewing
            let others = remaining.contains { registry.sockets[$0]?.viewing == viewing }
            return (remaining.isEmpty, others)
        }
        metrics.sockets.decrement()
        if last { presenceWake.wake() }
        let foregroundDevice = socket.isForeground ? socket.device : nil
        let stillForeground =
            foregroundDevice.map { device in sockets(of: socket.person.id).contains { $0.device == device && $0.isForeground } } ?? true
        let viewing = othersViewing ? nil : socket.viewing
        guard !stillForeground || viewing != nil else { return }
        Task {
            if let device = foregroundDevice, !stillForeground {
                try? await store.withTenant(socket.tenant) {
                    try await $0.setLiveForeground(false, device: device, of: socket.person, server: server)
                }
            }
            if let viewing {
                try? await store.withTenant(socket.tenant) { try await $0.setLiveViewing(socket.person, conversation: viewing, seconds: nil) }
            }
        }
    }

    /// Every socket now, for the loop.
    var sockets: [LiveSocket] { registry.withLock { Array($0.sockets.values) } }

    func sockets(of person: UUID) -> [LiveSocket] {
        registry.withLock { registry in (registry.byPerson[person] ?? []).compactMap { registry.sockets[$0] } }
    }
}

/// One tenant's joined sockets, by person.
struct LiveTenantSockets {
    let tenant: Tenant
    var people: [UUID: [LiveSocket]] = [:]
}

/// What an accepted upgrade request carries to its socket.
struct LivePlan: Sendable {
    let tenant: Tenant
    let person: Person
    let credentialID: UUID
    /// The console session it was opened in (`/console/live`): signing out closes it.
    var consoleSession: UUID? = nil
    let after: Int64?
    let device: String?
    let head: Int64
    let horizon: Int64
}
