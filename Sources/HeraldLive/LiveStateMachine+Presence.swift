import Foundation
import HeraldCore

/// The live hub's presence decisions (`LiveStateMachine`): whose presence to record, the
/// changes heard and whom to tell them to, subscriptions and their lookups, and the batching
/// of `presence` frames.
extension LiveStateMachine {
    /// Whose presence to record now: those whose first socket here opened (online), and those
    /// whose last one here closed (offline; not while the server stops: its leaving takes
    /// them all). What happened in between does not count: a socket that closes and comes
    /// back before this changes nothing.
    public mutating func presenceToRecord() -> (online: [LivePersonKey], offline: [LivePersonKey]) {
        var online: [LivePersonKey] = []
        var offline: [LivePersonKey] = []
        for key in presenceDirty {
            let here = byPerson[key.person] != nil
            if here, !presenceRecorded.contains(key) {
                online.append(key)
            } else if !here, presenceRecorded.contains(key), !stopping {
                offline.append(key)
            }
        }
        presenceDirty = []
        return (online, offline)
    }

    /// They were recorded.
    public mutating func presenceRecorded(online: [LivePersonKey], offline: [LivePersonKey]) {
        presenceRecorded.formUnion(online)
        presenceRecorded.subtract(offline)
    }

    /// Recording them failed: they are tried again.
    public mutating func presenceNotRecorded(online: [LivePersonKey], offline: [LivePersonKey]) {
        presenceDirty.formUnion(online + offline)
    }

    /// A presence change heard from a server (this one's included): to tell.
    public mutating func heard(_ change: LivePresenceChange) -> [Action] {
        presenceHeard.append(change)
        return [.tellPresence]
    }

    /// The changes heard since the last time, to tell (those of people who show their presence).
    public mutating func presenceToTell() -> [LivePresenceChange] {
        defer { presenceHeard = [] }
        return presenceHeard.filter(\.shown)
    }

    /// A `presence.subscribe` is being looked up: changes heard from now until `subscribed`
    /// are kept for it.
    public mutating func subscribing(_ id: UInt64) {
        guard members[id] != nil else { return }
        let start = heardBase + heardWhileSubscribing.count
        subscribingSockets[id] = start
        subscribingOrder.append((id, start))
    }

    /// The lookup of a `presence.subscribe` ended: the socket follows `people` from now on,
    /// instead of whom it followed, found visible at `departures` (`PresenceLookup`).
    /// - Returns: the changes of those people heard since `subscribing`, newer than what the
    ///   lookup may have read: to tell right after its answer.
    public mutating func subscribed(_ id: UInt64, to people: Set<UUID>, departures: Int64 = 0) -> [LivePresenceChange] {
        guard let start = subscribingSockets.removeValue(forKey: id), let tenant = keys[id]?.tenant else {
            subscribe(id, to: people, departures: departures)
            return []
        }
        var latest: [LivePresenceChange] = []
        for person in people {
            guard let index = heardLatest[LivePersonKey(tenant: tenant, person: person)], index >= start else { continue }
            let offset = index - heardBase
            if heardWhileSubscribing.indices.contains(offset) { latest.append(heardWhileSubscribing[offset]) }
        }
        trimHeard()
        subscribe(id, to: people, departures: departures)
        return latest.sorted { $0.email < $1.email }
    }

    /// The lookup of a `presence.subscribe` failed: the socket follows whom it followed.
    public mutating func notSubscribed(_ id: UInt64) {
        guard subscribingSockets.removeValue(forKey: id) != nil else { return }
        trimHeard()
    }

    /// Drops the changes no lookup still in progress began before: all of them when none is,
    /// else (once they are many, and half of them are no longer needed) those before the
    /// earliest; each drop so copies what stays at most once for as many as it drops.
    mutating func trimHeard() {
        if subscribingSockets.isEmpty {
            heardBase += heardWhileSubscribing.count
            heardWhileSubscribing = []
            heardLatest = [:]
            subscribingOrder = []
            subscribingHead = 0
        } else if heardWhileSubscribing.count >= Self.heardTrimAt, let earliest = earliestSubscribing(),
            earliest - heardBase >= Self.heardTrimAt / 2
        {
            heardWhileSubscribing.removeFirst(earliest - heardBase)
            heardBase = earliest
            heardLatest = heardLatest.filter { $0.value >= earliest }
        }
    }

    /// Where the earliest lookup still open began (`subscribingOrder`): the ended ones before
    /// it are dropped on the way, so each lookup is passed over once.
    mutating func earliestSubscribing() -> Int? {
        while subscribingHead < subscribingOrder.count {
            let (id, start) = subscribingOrder[subscribingHead]
            if subscribingSockets[id] == start { break }
            subscribingHead += 1
        }
        if subscribingHead >= 1_024, subscribingHead * 2 >= subscribingOrder.count {
            subscribingOrder.removeFirst(subscribingHead)
            subscribingHead = 0
        }
        return subscribingHead < subscribingOrder.count ? subscribingOrder[subscribingHead].start : nil
    }

    /// How many changes heard during lookups are kept before the oldest nobody needs go.
    static var heardTrimAt: Int { 4_096 }

    /// The socket follows `people` by subscription from now on, instead of whom it followed:
    /// a new list, all of it found visible when the tenant's departures were `departures`.
    public mutating func subscribe(_ id: UInt64, to people: Set<UUID>, departures: Int64 = 0) {
        guard members[id] != nil else { return }
        follow(id, people)
        subscriptionVersions += 1
        members[id]?.subscriptionsVersion = subscriptionVersions
        members[id]?.subscriptionsVerified = departures
    }

    /// The socket's subscriptions are `people` (the list's version and check stay).
    mutating func follow(_ id: UInt64, _ people: Set<UUID>) {
        guard let before = members[id]?.subscriptions else { return }
        unsubscribe(id, from: before.subtracting(people))
        for person in people.subtracting(before) { subscribers[person, default: []].insert(id) }
        members[id]?.subscriptions = people
    }

    mutating func unsubscribe(_ id: UInt64, from people: Set<UUID>) {
        for person in people {
            subscribers[person]?.remove(id)
            if subscribers[person]?.isEmpty == true { subscribers[person] = nil }
        }
    }

    /// A socket's list of subscriptions to check, as held when read (`subscriptionsToCheck`).
    public struct HeldSubscriptions: Sendable, Equatable {
        public let socket: UInt64
        public let subscriber: UUID
        /// Those of the list's people to check.
        public let people: Set<UUID>
        public let version: UInt64
    }

    /// The tenants whose sockets here subscribe to someone.
    public var subscribingTenants: [Tenant] {
        var found: [UUID: Tenant] = [:]
        for member in members.values where !member.subscriptions.isEmpty { found[member.key.tenant] = member.tenant }
        return Array(found.values)
    }

    /// The oldest count of departures at which a list of `tenant`'s sockets was found visible:
    /// who left since then is what `subscriptionsToCheck` needs. Nil: none subscribes.
    public func oldestVerified(tenant: UUID) -> Int64? {
        members.values.lazy.filter { $0.key.tenant == tenant && !$0.subscriptions.isEmpty }.map(\.subscriptionsVerified).min()
    }

    /// What to check again of `tenant`'s subscriptions, now that its count of departures is
    /// `departures` and `departed` holds, of everyone who left after `since`, the number of
    /// their latest departure. Only someone who left can have lost sight of anyone: a list
    /// found visible at count `v` is checked for its people who left after `v`, or whole if
    /// its own person did (or if it was found visible before `since`: who left before is not
    /// known here). A list with nothing to check is found visible at `departures` now.
    /// - Returns: the lists, each with only the people to check; none while nobody leaves.
    public mutating func subscriptionsToCheck(tenant: UUID, departures: Int64, departed: [UUID: Int64], since: Int64) -> [HeldSubscriptions] {
        var held: [HeldSubscriptions] = []
        for (id, member) in members where member.key.tenant == tenant && !member.subscriptions.isEmpty {
            let verified = member.subscriptionsVerified
            guard verified != departures else { continue }
            let people: Set<UUID>
            if verified < since || verified > departures || departed[member.key.person].map({ $0 > verified }) == true {
                people = member.subscriptions
            } else {
                people = member.subscriptions.filter { departed[$0].map { $0 > verified } == true }
            }
            if people.isEmpty {
                members[id]?.subscriptionsVerified = departures
            } else {
                held.append(HeldSubscriptions(socket: id, subscriber: member.key.person, people: people, version: member.subscriptionsVersion))
            }
        }
        return held
    }

    /// `held` was checked, each of its lists' people to check against the policy in a snapshot
    /// that saw every departure counted in `departures`: those in `gone[socket]` are no longer
    /// its person's to see and are followed no more; a list still the one checked (no new
    /// `presence.subscribe` meanwhile) is found visible at `departures`.
    public mutating func checked(_ held: [HeldSubscriptions], gone: [UInt64: Set<UUID>], departures: Int64) {
        for list in held {
            guard let member = members[list.socket] else { continue }
            if let gone = gone[list.socket], !gone.isEmpty { follow(list.socket, member.subscriptions.subtracting(gone)) }
            if member.subscriptionsVersion == list.version { members[list.socket]?.subscriptionsVerified = departures }
        }
    }

    /// Changes heard, to the sockets that follow each person: those of `followers[person]` (the
    /// people sharing a small conversation with them, found in the database) and those
    /// subscribed to them; never the person's own. A socket whose last `presence` frame went
    /// out at least `PresenceFollowing.batchSeconds` ago is given its frame now; any other
    /// keeps the changes for the frame `second` gives it when its time comes.
    /// - Returns: the frames to write now.
    public mutating func tell(_ changes: [LivePresenceChange], followers: [UUID: [UUID]], now: Date) -> [PresenceFrame] {
        var touched: Set<UInt64> = []
        if !subscribingSockets.isEmpty {
            for change in changes {
                heardLatest[LivePersonKey(tenant: change.tenant, person: change.person)] = heardBase + heardWhileSubscribing.count
                heardWhileSubscribing.append(change)
            }
            trimHeard()
        }
        for change in changes {
            var ids = subscribers[change.person] ?? []
            for reader in followers[change.person] ?? [] { ids.formUnion(byPerson[reader] ?? []) }
            for id in ids {
                guard let key = keys[id], key.person != change.person, key.tenant == change.tenant else { continue }
                presenceBatches[id, default: PresenceBatch()].pending[change.person] = change
                touched.insert(id)
            }
        }
        presenceWaiting.formUnion(touched)
        return flushPresence(touched, now: now)
    }

    /// The frames of the sockets among `ids` whose batching lets them go at `now`.
    mutating func flushPresence(_ ids: some Sequence<UInt64>, now: Date) -> [PresenceFrame] {
        var frames: [PresenceFrame] = []
        for id in ids {
            guard let batch = presenceBatches[id], !batch.pending.isEmpty, let socket = members[id]?.socket else {
                presenceWaiting.remove(id)
                continue
            }
            if let sent = batch.sentAt, now.timeIntervalSince(sent) < PresenceFollowing.batchSeconds { continue }
            presenceBatches[id] = PresenceBatch(pending: [:], sentAt: now)
            presenceWaiting.remove(id)
            frames.append(PresenceFrame(socket: socket, changes: batch.pending.values.sorted { $0.email < $1.email }))
        }
        return frames
    }
}
