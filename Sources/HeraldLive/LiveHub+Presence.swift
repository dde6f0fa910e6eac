import Foundation
import HeraldCore
import HeraldStore

extension LiveHub {
    /// Records the presence of the people whose first socket here opened or last one closed
    /// since the last time (`LiveStateMachine.presenceToRecord`). One transaction for all of
    /// them; on failure they are tried again at the next wake (every second).
    func recordPresence() async throws {
        let (online, offline) = machine.withLock { $0.presenceToRecord() }
        guard !online.isEmpty || !offline.isEmpty else { return }
        do {
            let changes = try await background.liveRecordPresence(server: server, online: online, offline: offline)
            machine.withLock { $0.presenceRecorded(online: online, offline: offline) }
            metrics.presenceChanges.increment(by: changes.count)
        } catch {
            machine.withLock { $0.presenceNotRecorded(online: online, offline: offline) }
            throw error
        }
    }

    /// The presence changes heard from every server (this one's included) since the last time,
    /// to the local sockets that follow each person (`PresenceFollowing`): one query a tenant
    /// finds who shares a small conversation with them; the subscriptions are the machine's.
    /// A tenant whose query fails is skipped (its changes are not told again: presence frames
    /// are hints, `GET /v1/presence` is the truth); the failure is thrown once every tenant was tried.
    func tellPresence() async throws {
        let heard = machine.withLock { $0.presenceToTell() }
        guard !heard.isEmpty else { return }
        var failure: (any Error)?
        for (tenantID, changes) in Dictionary(grouping: heard, by: \.tenant) {
            guard let tenant = machine.withLock({ $0.tenant(tenantID) }) else { continue }
            do {
                let followers = try await background.withTenant(tenant) { session in
                    try await session.presenceFollowers(of: changes.map(\.person))
                }
                send(machine.withLock { $0.tell(changes, followers: followers, now: clock()) })
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Writes `presence` frames.
    func send(_ frames: [LiveStateMachine<LiveSocket>.PresenceFrame]) {
        for frame in frames {
            frame.socket.send(LiveFrame.text(LiveFrame.Presence(frame.changes.map(LiveFrame.PresenceEntry.init))))
            metrics.sent("presence")
        }
    }

    /// `presence.subscribe`: the socket follows the people named that its person may see, from
    /// now on instead of those it followed; anyone else is named in an `error` frame. The answer
    /// is a `presence` frame with their state as one query read it; the changes heard while it
    /// ran follow it in a frame of their own (`LiveStateMachine.subscribing`), so that none falls
    /// between the two.
    func subscribe(_ socket: LiveSocket, to named: [String]) async throws {
        machine.withLock { $0.subscribing(socket.id) }
        let found: PresenceLookup
        do {
            found = try await store.withTenant(socket.tenant) { try await $0.presence(of: named, viewer: socket.person) }
        } catch {
            // The last list stays.
            machine.withLock { $0.notSubscribed(socket.id) }
            throw error
        }
        let heard = machine.withLock { $0.subscribed(socket.id, to: Set(found.people.map(\.person)), departures: found.departures) }
        if !found.unknown.isEmpty {
            refuse(
                socket,
                .init(
                    "not_found",
                    "left out, as nobody \(socket.person.email) may see the presence of: " + found.unknown.prefix(10).joined(separator: ", ")
                        + (found.unknown.count > 10 ? " and \(found.unknown.count - 10) more" : "")))
        }
        var texts = [LiveFrame.text(LiveFrame.Presence(found.people.map(LiveFrame.PresenceEntry.init)))]
        if !heard.isEmpty { texts.append(LiveFrame.text(LiveFrame.Presence(heard.map(LiveFrame.PresenceEntry.init)))) }
        socket.send(texts)
        metrics.sent("presence", count: texts.count)
    }

    /// The most pairs `recheckSubscriptions` asks of PostgreSQL in one query.
    static let recheckBatch = 5_000

    /// The subscriptions checked again against the access policy where someone may have lost
    /// sight of someone (every minute, and at once when a departure is told, sql/0047):
    /// one query a tenant reads who left since its lists were found visible (sql/0046), and
    /// only the pairs with someone who left are checked (`LiveStateMachine.subscriptionsToCheck`),
    /// each once however many sockets hold it, in queries of at most `recheckBatch` pairs
    /// (~10 µs of PostgreSQL a pair). Someone the subscriber may no longer see is no longer
    /// followed.
    /// - Returns: how many pairs were checked.
    @discardableResult
    func recheckSubscriptions() async -> Int {
        var checked = 0
        let tenants = machine.withLock { $0.subscribingTenants }
        for tenant in tenants {
            guard let since = machine.withLock({ $0.oldestVerified(tenant: tenant.id) }) else { continue }
            // Read before the pairs, so that every departure it counts is in their snapshots.
            guard let departures = try? await background.withTenant(tenant, readOnly: true, { try await $0.presenceDepartures(since: since) })
            else { continue }
            let held = machine.withLock {
                $0.subscriptionsToCheck(tenant: tenant.id, departures: departures.count, departed: departures.departed, since: since)
            }
            guard !held.isEmpty else { continue }
            var unique: Set<PresencePair> = []
            for list in held { for person in list.people { unique.insert(PresencePair(subscriber: list.subscriber, person: person)) } }
            let pairs = Array(unique)
            checked += pairs.count
            metrics.presencePairsChecked.increment(by: pairs.count)
            var visible: Set<PresencePair> = []
            var failed = false
            for start in stride(from: 0, to: pairs.count, by: Self.recheckBatch) where !failed {
                let batch = pairs[start..<min(start + Self.recheckBatch, pairs.count)].map { (subscriber: $0.subscriber, person: $0.person) }
                if let found = try? await background.withTenant(tenant, { try await $0.presenceVisible(batch) }) {
                    visible.formUnion(found)
                } else {
                    failed = true
                }
            }
            // A check that failed changes nothing: the next one decides.
            guard !failed else { continue }
            var gone: [UInt64: Set<UUID>] = [:]
            for list in held {
                let lost = list.people.filter { !visible.contains(PresencePair(subscriber: list.subscriber, person: $0)) }
                if !lost.isEmpty { gone[list.socket] = lost }
            }
            machine.withLock { $0.checked(held, gone: gone, departures: departures.count) }
        }
        return checked
    }
}
