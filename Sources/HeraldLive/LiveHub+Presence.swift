import Foundation
import HeraldCore
import HeraldStore

extension LiveHub {
    /// Records the presence of the people whose first socket here opened or last one closed
    /// since the last time: whatever happened in between, what counts is whether they hold a
    /// socket here now, so a socket that closes and comes back before this runs changes
    /// nothing. One transaction for all of them; on failure they are tried again at the next
    /// wake (every second). While the server stops, nobody is recorded offline one by one:
    /// the server's leaving takes them all.
    func recordPresence() async throws {
        let (online, offline) = registry.withLock { registry -> ([LivePersonKey], [LivePersonKey]) in
            var online: [LivePersonKey] = []
            var offline: [LivePersonKey] = []
            for key in registry.presenceDirty {
                let here = registry.byPerson[key.person] != nil
                if here, !registry.presenceRecorded.contains(key) {
                    online.append(key)
                } else if !here, registry.presenceRecorded.contains(key), !registry.stopping {
                    offline.append(key)
                }
            }
            registry.presenceDirty = []
            return (online, offline)
        }
        guard !online.isEmpty || !offline.isEmpty else { return }
        do {
            let changes = try await background.liveRecordPresence(server: server, online: online, offline: offline)
            registry.withLock { registry in
                registry.presenceRecorded.formUnion(online)
                registry.presenceRecorded.subtract(offline)
            }
            metrics.presenceChanges.increment(by: changes.count)
        } catch {
            registry.withLock { $0.presenceDirty.formUnion(online + offline) }
            throw error
        }
    }

    /// The presence changes heard from every server (this one's included) since the last time,
    /// to the local sockets of those who may see them: one query a tenant for all of them, and
    /// each socket's frames in one write. A tenant whose query fails is skipped (its changes are
    /// not told again: presence frames are hints, `GET …/presence` is the truth); the failure is
    /// thrown once every tenant was tried.
    func tellPresence() async throws {
        let heard = registry.withLock { registry -> [LivePresenceChange] in
            defer { registry.presenceHeard = [] }
            return registry.presenceHeard.filter(\.shown)
        }
        guard !heard.isEmpty else { return }
        let local = sockets
        var failure: (any Error)?
        for (tenantID, changes) in Dictionary(grouping: heard, by: \.tenant) {
            let sockets = local.filter { $0.tenant.id == tenantID }
            guard let tenant = sockets.first?.tenant else { continue }
            let byPerson = Dictionary(grouping: sockets, by: \.person.id)
            do {
                let audiences = try await background.withTenant(tenant) { session in
                    try await session.presenceAudiences(of: changes.map(\.person), among: Array(byPerson.keys))
                }
                var frames: [UInt64: (socket: LiveSocket, texts: [String])] = [:]
                for change in changes {
                    let text = LiveFrame.text(LiveFrame.Presence(person: change.email, online: change.online, lastSeen: change.lastSeen))
                    for reader in audiences[change.person] ?? [] {
                        for socket in byPerson[reader] ?? [] {
                            frames[socket.id, default: (socket, [])].texts.append(text)
                        }
                    }
                }
                for (socket, texts) in frames.values {
                    socket.send(texts)
                    metrics.sent("presence", count: texts.count)
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }
}
