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
        subscribingSockets[id] = heardBase + heardWhileSubscribing.count
    }

    /// The lookup of a `presence.subscribe` ended: the socket follows `people` from now on,
    /// instead of whom it followed. - Returns: the changes of those people heard since
    /// `subscribing`, newer than what the lookup may have read: to tell right after its answer.
    public mutating func subscribed(_ id: UInt64, to people: Set<UUID>) -> [LivePresenceChange] {
        guard let start = subscribingSockets.removeValue(forKey: id), let tenant = keys[id]?.tenant else {
            subscribe(id, to: people)
            return []
        }
        var latest: [LivePresenceChange] = []
        for person in people {
            guard let index = heardLatest[LivePersonKey(tenant: tenant, person: person)], index >= start else { continue }
            let offset = index - heardBase
            if heardWhileSubscribing.indices.contains(offset) { latest.append(heardWhileSubscribing[offset]) }
        }
        trimHeard()
        subscribe(id, to: people)
        return latest.sorted { $0.email < $1.email }
    }

    /// Drops the changes no lookup still in progress began before: all of them when none is,
    /// else (once they are many) those before the earliest.
    mutating func trimHeard() {
        if subscribingSockets.isEmpty {
            heardBase += heardWhileSubscribing.count
            heardWhileSubscribing = []
            heardLatest = [:]
        } else if heardWhileSubscribing.count >= Self.heardTrimAt, let earliest = subscribingSockets.values.min(), earliest > heardBase {
            heardWhileSubscribing.removeFirst(earliest - heardBase)
            heardBase = earliest
            heardLatest = heardLatest.filter { $0.value >= earliest }
        }
    }

    /// How many changes heard during lookups are kept before the oldest nobody needs go.
    static var heardTrimAt: Int { 4_096 }

    /// The socket follows `people` by subscription from now on, instead of whom it followed.
    public mutating func subscribe(_ id: UInt64, to people: Set<UUID>) {
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

    /// The socket no longer follows `people` by subscription (they are no longer its person's to see).
    public mutating func unfollow(_ id: UInt64, _ people: Set<UUID>) {
        guard let subscriptions = members[id]?.subscriptions else { return }
        subscribe(id, to: subscriptions.subtracting(people))
    }

    /// Every socket's subscriptions, by tenant, to check them again.
    public var subscriptionsHeld: [(tenant: Tenant, subscriptions: [(id: UInt64, subscriber: UUID, people: Set<UUID>)])] {
        var byTenant: [UUID: (tenant: Tenant, subscriptions: [(id: UInt64, subscriber: UUID, people: Set<UUID>)])] = [:]
        for (id, member) in members where !member.subscriptions.isEmpty {
            byTenant[member.key.tenant, default: (member.tenant, [])].subscriptions.append((id, member.key.person, member.subscriptions))
        }
        return Array(byTenant.values)
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
