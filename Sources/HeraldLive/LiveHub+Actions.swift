import Foundation
import HeraldCore
import HeraldStore

extension LiveHub {
    /// Does what the machine said, in order: the one place its actions are performed. What
    /// needs no database is done at once; the rest is awaited, each in turn.
    func perform(_ actions: [LiveStateMachine<LiveSocket>.Action]) async {
        for action in actions where !performAtOnce(action) {
            await performInTheDatabase(action)
        }
    }

    /// `perform` from where nothing may wait (a connection's handler, a listener's event): what
    /// needs the database is done by a task of its own, in order.
    func performSoon(_ actions: [LiveStateMachine<LiveSocket>.Action]) {
        let later = actions.filter { !performAtOnce($0) }
        guard !later.isEmpty else { return }
        Task {
            for action in later { await performInTheDatabase(action) }
        }
    }

    /// Does `action` if it needs no database. - Returns: whether it did.
    private func performAtOnce(_ action: LiveStateMachine<LiveSocket>.Action) -> Bool {
        switch action {
        case .round: roundWake.wake()
        case .recordPresence: presenceWake.wake()
        case .tellPresence: presenceHeardWake.wake()
        case .recheckSubscriptions: recheckWake.wake()
        case .presence(let frames): send(frames)
        case .beat(let sockets): for socket in sockets { socket.beat() }
        case .trim: trim()
        case .close(let sockets, let code, let reason): for socket in sockets { socket.close(code: code, reason: reason) }
        case .stopViewing, .leaveForeground, .checkCredentials, .announceTyping, .upkeep, .prune: return false
        }
        return true
    }

    private func performInTheDatabase(_ action: LiveStateMachine<LiveSocket>.Action) async {
        switch action {
        case .stopViewing(let socket, let conversation):
            try? await store.withTenant(socket.tenant) { try await $0.setLiveViewing(socket.person, conversation: conversation, seconds: nil) }
        case .leaveForeground(let socket, let device):
            try? await store.withTenant(socket.tenant) {
                try await $0.setLiveForeground(false, device: device, of: socket.person, server: server)
            }
        case .checkCredentials(let since): await checkCredentials(since: since)
        case .announceTyping(let socket, let conversation):
            // The app's own frame: what fails is told to it, as any frame's failure.
            do {
                try await store.withTenant(socket.tenant) { try await $0.announceTyping(socket.person, in: conversation) }
            } catch {
                refuse(socket, because: error)
            }
        case .upkeep: await upkeep()
        case .prune: _ = try? await background.pruneLive(olderThan: settings.retention)
        case .round, .recordPresence, .tellPresence, .recheckSubscriptions, .presence, .beat, .trim, .close: _ = performAtOnce(action)
        }
    }
}
