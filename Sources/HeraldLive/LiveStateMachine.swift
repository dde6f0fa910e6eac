import Foundation
import HeraldCore

/// The live hub's decisions, as a value: which sockets the server holds and for whom, which
/// have caught up from their cursors, up to where the rounds have given the feed, whose
/// presence is to be recorded or told, what each socket views and whether its app is in the
/// foreground, whose typing is told, when credentials are checked, and what the heartbeat and
/// the upkeep do each second. Each `mutating` function takes one event (with the time, when it
/// matters: the machine reads no clock) and answers what to do as `LiveAction`s, which
/// `LiveHub.perform` does outside the lock that holds this (docs/architecture.md). Generic
/// over the socket it hands back, so that its tests need no connection.
public struct LiveStateMachine<Socket: Sendable>: Sendable {
    /// A socket the hub holds, and what it knows of it.
    public struct Member: Sendable {
        public let socket: Socket
        public let tenant: Tenant
        public let key: LivePersonKey
        /// The conversation on its screen (`viewing`), if any.
        public var viewing: UUID?
        /// Its app says it is in the foreground.
        public var foreground = false
        public let device: String?
        /// The people it subscribed to (`presence.subscribe`).
        public var subscriptions: Set<UUID> = []
        /// Which list `subscriptions` is (each new list has a new number), and the tenant's
        /// count of departures at which all of it was last found visible (sql/0046).
        public var subscriptionsVersion: UInt64 = 0
        public var subscriptionsVerified: Int64 = 0
    }

    /// A socket's `presence` frames: the changes waiting for the next, and when the last went.
    /// Kept beside `members` (as the people by socket are) so that telling a change to many
    /// sockets never copies their `Member`s.
    struct PresenceBatch {
        var pending: [UUID: LivePresenceChange] = [:]
        var sentAt: Date?
    }

    public typealias PresenceFrame = LivePresenceFrame<Socket>
    public typealias Action = LiveAction<Socket>

    /// One round's work: what the joined sockets have been given up to (`cursor`), who they
    /// are by tenant and person, and who is catching up.
    public struct Round: Sendable {
        public let cursor: Int64
        public let joined: [UUID: LiveTenantSockets<Socket>]
        public let joining: [Socket]
    }

    public let settings: LiveSettings
    public internal(set) var members: [UInt64: Member] = [:]
    /// Each socket's tenant and person (its `Member`'s `key`).
    var keys: [UInt64: LivePersonKey] = [:]
    var byPerson: [UUID: Set<UInt64>] = [:]
    /// The tenants that hold sockets here, and how many each.
    private var tenants: [UUID: (tenant: Tenant, sockets: Int)] = [:]
    private var next: UInt64 = 1
    /// Up to where every joined socket has been given the feed.
    public private(set) var cursor: Int64 = 0
    public private(set) var stopping = false
    /// Sockets not yet caught up from their cursors: the rounds' frames are not theirs yet.
    private var joining: Set<UInt64> = []
    /// The joined sockets by tenant and person, kept while no socket joins or closes.
    private var joinedCache: [UUID: LiveTenantSockets<Socket>]?
    /// People whose first socket here opened or whose last closed since their presence was
    /// last recorded.
    var presenceDirty: Set<LivePersonKey> = []
    /// People this server has recorded online.
    var presenceRecorded: Set<LivePersonKey> = []
    /// Presence changes on any server, not yet told to the sockets here.
    var presenceHeard: [LivePresenceChange] = []
    /// The sockets subscribed to each person.
    var subscribers: [UUID: Set<UInt64>] = [:]
    /// Sockets with presence changes waiting.
    var presenceWaiting: Set<UInt64> = []
    var presenceBatches: [UInt64: PresenceBatch] = [:]
    /// Sockets whose `presence.subscribe` is being looked up, each with where the changes heard
    /// since it began start in `heardWhileSubscribing`.
    var subscribingSockets: [UInt64: Int] = [:]
    /// The same lookups in the order they began (their starts never decrease), from
    /// `subscribingHead` on, with some that have ended: the earliest still open is the first
    /// still in `subscribingSockets` with its start, found without a scan of them all.
    var subscribingOrder: [(id: UInt64, start: Int)] = []
    var subscribingHead = 0
    /// The changes told while any `presence.subscribe` was being looked up (its answer may
    /// predate them), once for all of them; `heardBase` is the index of the first kept.
    var heardWhileSubscribing: [LivePresenceChange] = []
    var heardBase = 0
    /// Where each person's latest change is in `heardWhileSubscribing` (counted from the first
    /// ever kept, as `heardBase` is): a lookup's ending reads its fifty people there rather than
    /// every change heard while it ran (thousands in a reconnect storm).
    var heardLatest: [LivePersonKey: Int] = [:]
    /// The number of the last list of subscriptions (`Member.subscriptionsVersion`).
    var subscriptionVersions: UInt64 = 0
    /// Sockets opened and closed since freed memory was last handed back.
    private var churn = 0
    private var tick = 0
    /// Typing told at most once every few seconds per person and conversation.
    private var typingThrottle = TypingThrottle()
    /// The database's time of the last credentials check.
    private(set) var credentialsCheckedAt: Date?

    /// How many sockets opening or closing make the hub hand memory back.
    public static var trimAfterChurn: Int { 1_000 }
    /// Every how many seconds the credentials of all sockets are checked in full; in between,
    /// only those that ended since the last check are read.
    public static var fullCheckEvery: Int { 60 }
    /// How far back each check reaches before the last one (seconds): for revoking
    /// transactions still open at the last check.
    public static var credentialsCheckMargin: TimeInterval { 5 }

    public init(settings: LiveSettings) {
        self.settings = settings
    }

    // MARK: Sockets

    public func admission(of person: UUID) -> LiveAdmission {
        if stopping || members.count >= settings.perServer { return .serverFull }
        if byPerson[person]?.count ?? 0 >= settings.perPerson { return .personFull(limit: settings.perPerson) }
        return .admitted
    }

    /// An id for a socket about to open.
    public mutating func nextID() -> UInt64 {
        defer { next += 1 }
        return next
    }

    /// A socket opened (and its `hello` went out): it catches up in the next round, and when it
    /// is its person's first here their presence is to be recorded.
    public mutating func opened(_ id: UInt64, _ socket: Socket, tenant: Tenant, person: UUID, device: String?) -> [Action] {
        let key = LivePersonKey(tenant: tenant.id, person: person)
        members[id] = Member(socket: socket, tenant: tenant, key: key, device: device)
        keys[id] = key
        tenants[tenant.id, default: (tenant, 0)].sockets += 1
        churn += 1
        joining.insert(id)
        byPerson[key.person, default: []].insert(id)
        guard byPerson[key.person]?.count == 1 else { return [.round] }
        presenceDirty.insert(key)
        return [.recordPresence, .round]
    }

    /// A socket's connection is gone. When it was its person's last here, their presence is to
    /// be recorded; the conversation it viewed that none of the person's other sockets views is
    /// no longer viewed; the device whose app it said was in the foreground, when no other
    /// socket of the person says so of it, is no longer in the foreground.
    public mutating func closed(_ id: UInt64) -> [Action] {
        guard let member = members.removeValue(forKey: id) else { return [] }
        keys[id] = nil
        tenants[member.key.tenant]?.sockets -= 1
        if tenants[member.key.tenant]?.sockets == 0 { tenants[member.key.tenant] = nil }
        churn += 1
        unsubscribe(id, from: member.subscriptions)
        presenceWaiting.remove(id)
        presenceBatches[id] = nil
        subscribingSockets[id] = nil
        trimHeard()
        if joining.remove(id) == nil { joinedCache = nil }
        byPerson[member.key.person]?.remove(id)
        let others = (byPerson[member.key.person] ?? []).compactMap { members[$0] }
        var actions: [Action] = []
        if others.isEmpty {
            byPerson[member.key.person] = nil
            presenceDirty.insert(member.key)
            actions.append(.recordPresence)
        }
        if let viewing = member.viewing, !others.contains(where: { $0.viewing == viewing }) {
            actions.append(.stopViewing(member.socket, conversation: viewing))
        }
        if member.foreground, let device = member.device, !others.contains(where: { $0.device == device && $0.foreground }) {
            actions.append(.leaveForeground(member.socket, device: device))
        }
        return actions
    }

    /// The conversation on a socket's screen: the one it leaves, when none of the person's
    /// other sockets views it, is no longer viewed.
    public mutating func view(_ id: UInt64, _ conversation: UUID?) -> [Action] {
        guard let member = members[id] else { return [] }
        members[id]?.viewing = conversation
        guard let before = member.viewing, before != conversation else { return [] }
        let others = (byPerson[member.key.person] ?? []).compactMap { members[$0] }
        return others.contains { $0.viewing == before } ? [] : [.stopViewing(member.socket, conversation: before)]
    }

    /// The socket's person types in `conversation` at `now`: told to its other participants at
    /// most once every few seconds (`TypingThrottle`); the other frames cost nothing.
    public mutating func typing(_ id: UInt64, in conversation: UUID, now: Date) -> [Action] {
        guard let member = members[id],
            typingThrottle.admit(TypingThrottle.Key(person: member.key.person, conversation: conversation), at: now)
        else { return [] }
        return [.announceTyping(member.socket, conversation: conversation)]
    }

    /// A credentials check read the database at `time`: the next reaches back from there.
    public mutating func credentialsChecked(at time: Date) {
        credentialsCheckedAt = time
    }

    /// The socket's app came to the foreground, or left it.
    public mutating func foreground(_ id: UInt64, _ value: Bool) {
        members[id]?.foreground = value
    }

    /// A tenant that holds sockets here, by its id.
    public func tenant(_ id: UUID) -> Tenant? {
        tenants[id]?.tenant
    }

    /// What the sockets view now (the upkeep renews it).
    public var viewed: [(socket: Socket, conversation: UUID)] {
        members.values.compactMap { member in member.viewing.map { (member.socket, $0) } }
    }

    public var sockets: [Socket] { members.values.map(\.socket) }

    // MARK: Rounds

    /// The server starts reading the feed at `head`.
    public mutating func start(at head: Int64) {
        cursor = head
    }

    /// A round's work; nil when no socket is here (one that opens asks for a round itself).
    public mutating func round() -> Round? {
        guard !members.isEmpty else { return nil }
        return Round(cursor: cursor, joined: joinedView(), joining: joining.compactMap { members[$0]?.socket })
    }

    /// The round gave the feed up to `head`, and caught up the sockets `caughtUp`: from now on
    /// the rounds' frames are theirs.
    public mutating func roundEnded(head: Int64, caughtUp: [UInt64]) {
        for id in caughtUp where joining.remove(id) != nil {
            // Added to the joined view as it is, rather than have the next round build it anew.
            guard let member = members[id] else { continue }
            joinedCache?[member.key.tenant, default: LiveTenantSockets(tenant: member.tenant)].people[member.key.person, default: []].append(
                member.socket)
        }
        cursor = max(cursor, head)
    }

    private mutating func joinedView() -> [UUID: LiveTenantSockets<Socket>] {
        if let joinedCache { return joinedCache }
        var view: [UUID: LiveTenantSockets<Socket>] = [:]
        for (id, member) in members where !joining.contains(id) {
            view[member.key.tenant, default: LiveTenantSockets(tenant: member.tenant)].people[member.key.person, default: []].append(member.socket)
        }
        joinedCache = view
        return view
    }

    // MARK: The heartbeat and the upkeep

    /// One second, in this order: the `presence` frames the batching held back, whose heartbeat
    /// it is (each socket's in the second its id falls on, so the pings of many sockets spread
    /// over the interval), a round and a recording of presence (either may have been missed or
    /// have failed), then what is due: the credentials every two seconds (in full the first
    /// time and every `fullCheckEvery` seconds, with the subscriptions checked again), the
    /// upkeep every five (and the memory handed back after much churn), pruning every minute.
    public mutating func second(now: Date) -> [Action] {
        tick += 1
        var actions: [Action] = []
        let frames = flushPresence(presenceWaiting, now: now)
        if !frames.isEmpty { actions.append(.presence(frames)) }
        let interval = UInt64(max(1, settings.heartbeat))
        let phase = UInt64(tick) % interval
        let beating = members.filter { $0.key % interval == phase }.map(\.value.socket)
        if !beating.isEmpty { actions.append(.beat(beating)) }
        actions += [.round, .recordPresence]
        if tick % 2 == 0, !members.isEmpty {
            let full = tick % Self.fullCheckEvery == 2 || credentialsCheckedAt == nil
            actions.append(.checkCredentials(since: full ? nil : credentialsCheckedAt.map { $0 - Self.credentialsCheckMargin }))
            if tick % Self.fullCheckEvery == 2 { actions.append(.recheckSubscriptions) }
        }
        if tick % 5 == 0 {
            actions.append(.upkeep)
            if churn >= Self.trimAfterChurn {
                churn = 0
                actions.append(.trim)
            }
        }
        if tick % 60 == 0 { actions.append(.prune) }
        return actions
    }

    /// The server stops: no socket opens from now on, and every one is closed (1001).
    public mutating func stop() -> [Action] {
        stopping = true
        return [.close(sockets, code: LiveCloseCode.goingAway, reason: "the server is shutting down: reconnect with your cursor")]
    }
}

/// One tenant's joined sockets, by person.
public struct LiveTenantSockets<Socket: Sendable>: Sendable {
    public let tenant: Tenant
    public var people: [UUID: [Socket]] = [:]
}
