import Foundation
import HeraldCore
import HeraldLoops
import HeraldStore
import Logging
import ServiceLifecycle

#if os(Linux)
    /// glibc's `malloc_trim` (malloc.h, which the Glibc module does not bring in).
    @_silgen_name("malloc_trim")
    private func mallocTrim(_ pad: Int) -> Int32
#endif

extension LiveHub: Service {
    /// The hub's loops until a graceful shutdown (SIGTERM): the wake-ups from other servers,
    /// the sequencer, the rounds, and the upkeep (this server's stamp, dead servers' presence,
    /// revoked credentials, viewing renewals, pruning). On shutdown every socket is closed with
    /// 1001 and this server's presence removed. Cancelled (another service of the process
    /// failed), every loop ends at once and the sockets are closed the same way.
    public func run() async throws {
        try await store.withPoolOfItsOwn(size: 3) { own in
            loopStore.withLock { $0 = own }
            defer { loopStore.withLock { $0 = nil } }
            try await runLoops()
        }
    }

    private func runLoops() async throws {
        let store = background
        try await store.stampLiveServer(server)
        let head = try await store.liveHead()
        machine.withLock { $0.start(at: head) }
        let listener = LiveListener(store: store, logger: logger)
        let (sequencerWakes, sequencerWake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                // However the loops end, every other loop ends with them.
                defer {
                    listener.stop()
                    sequencerWake.finish()
                    self.roundWake.finish()
                    self.presenceWake.finish()
                    self.presenceHeardWake.finish()
                    self.recheckWake.finish()
                }
                group.addTask {
                    for await event in listener.events {
                        switch event {
                        case .pending: sequencerWake.yield()
                        case .feed: self.wake()
                        case .presence(let change): self.performSoon(self.machine.withLock { $0.heard(change) })
                        case .typing(let typing): await self.typing(typing)
                        case .membership: self.recheckWake.wake()
                        case .connected:
                            sequencerWake.yield()
                            self.wake()
                        case .disconnected(let reason): self.logger.warning("live channel stopped listening", metadata: ["reason": "\(reason)"])
                        }
                    }
                }
                group.addTask {
                    let floor = QueueFloor()
                    await self.failures.sequencer.forEach(sequencerWakes) { try await store.sequenceLive(floor: floor) }
                }
                group.addTask {
                    await self.failures.presence.forEach(self.presenceWake.wakes) { try await self.recordPresence() }
                }
                group.addTask {
                    await self.failures.tellPresence.forEach(self.presenceHeardWake.wakes) { try await self.tellPresence() }
                }
                group.addTask {
                    await self.failures.rounds.forEach(self.roundWake.wakes) { try await self.roundOrAgain() }
                }
                group.addTask {
                    for await _ in self.recheckWake.wakes { await self.recheckSubscriptions() }
                }
                group.addTask {
                    while !self.isStopping {
                        do { try await Task.sleep(for: .seconds(1)) } catch { break }
                        await self.perform(self.machine.withLock { $0.second(now: self.clock()) })
                        // Hints can be lost (a reconnect); the tables are read anyway.
                        sequencerWake.yield()
                    }
                }
                // The first loop to end (the ticker at a shutdown, any of them when the task is
                // cancelled) ends the others.
                await group.next()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.stop()
        }
        stop()
        await socketsEnded(within: .seconds(3))
        // Cancelled, nothing more can be written: the server's row expires, and with it its
        // presence, as a dead server's does.
        guard !Task.isCancelled else { return }
        do { try await store.leaveLive(server: server) } catch { logger.warning("cannot remove presence", metadata: ["error": "\(error)"]) }
    }

    var isStopping: Bool { machine.withLock { $0.stopping } }

    /// Closes every socket with 1001 and ends the loops.
    func stop() {
        performSoon(machine.withLock { $0.stop() })
    }

    /// After `stop`: waits (at most `limit`) for the sockets' closes to go out and their
    /// connections to end, since no task holds a socket and the process may exit after this.
    private func socketsEnded(within limit: Duration) async {
        let deadline = ContinuousClock.now + limit
        while machine.withLock({ !$0.members.isEmpty }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// After many sockets opened or closed (a ramp, a reconnect storm), hands the memory freed
    /// since back to the system: each socket's upgrade leaves short-lived allocations between
    /// the long-lived ones, and glibc keeps the freed pages between them otherwise (measured:
    /// 200 MB taken for 68 MB in use after 2,000 sockets opened at once).
    func trim() {
        #if os(Linux)
            _ = mallocTrim(0)
        #endif
    }

    /// Stamps this server, takes dead servers' people offline, renews `viewing`, and looks for
    /// tables whose statistics are older than their rows (`Store.analyzeYoungTables`, every
    /// five seconds as the upkeep is): `herald serve` may run where no worker does, and the
    /// plans its connections keep were made when the tables were small (a group's participants
    /// joined to a team of 2,000 by a plan made for a team of 4: a second a message).
    func upkeep() async {
        do {
            try await background.stampLiveServer(server)
            metrics.presenceChanges.increment(by: try await background.reapLiveServers().count)
            try await background.analyzeYoungTables()
            failures.upkeep.succeeded()
        } catch {
            if Task.isCancelled { return }
            failures.upkeep.failed(error)
        }
        for (socket, conversation) in machine.withLock({ $0.viewed }) {
            try? await background.withTenant(socket.tenant) {
                try await $0.setLiveViewing(socket.person, conversation: conversation, seconds: Self.viewingSeconds)
            }
        }
    }

    /// Closes, within seconds, the sockets of credentials revoked or expired since they opened, and
    /// those of console sessions signed out or expired: what ended `since` then
    /// (`credentialsEnded`), or (nil: the first check, then every
    /// `LiveStateMachine.fullCheckEvery` seconds) the standing of every credential held, which
    /// also finds those removed outright.
    func checkCredentials(since: Date?) async {
        let all = sockets
        guard !all.isEmpty else { return }
        do {
            var ended: [UUID: AuthenticationFailure] = [:]
            if let since {
                let (found, checkedAt) = try await background.credentialsEnded(since: since)
                machine.withLock { $0.credentialsChecked(at: checkedAt) }
                for (key, failure) in found { ended[key.id] = failure }
            } else {
                let (failures, checkedAt) = try await background.credentialStanding(
                    Array(Set(all.map { CredentialKey(tenant: $0.tenant.id, id: $0.credentialID) })),
                    sessions: Array(Set(all.compactMap { socket in socket.consoleSession.map { CredentialKey(tenant: socket.tenant.id, id: $0) } })))
                machine.withLock { $0.credentialsChecked(at: checkedAt) }
                ended = failures
            }
            failures.credentials.succeeded()
            guard !ended.isEmpty else { return }
            for socket in all {
                if let failure = ended[socket.credentialID] ?? socket.consoleSession.flatMap({ ended[$0] }) {
                    socket.close(code: LiveCloseCode.unauthorized, reason: failure.description)
                }
            }
        } catch {
            if !Task.isCancelled { failures.credentials.failed(error) }
        }
    }

    /// Someone typing, to the local sockets of the conversation's other participants.
    private func typing(_ typing: LiveTyping) async {
        let local = sockets.filter { $0.tenant.id == typing.tenant && $0.person.id != typing.person }
        guard let tenant = local.first?.tenant else { return }
        do {
            let readers = Set(
                try await background.withTenant(tenant) {
                    try await $0.participants(of: typing.conversation, among: Array(Set(local.map(\.person.id))))
                })
            let text = LiveFrame.text(LiveFrame.Typing(conversation: typing.conversation, person: typing.email))
            for socket in local where readers.contains(socket.person.id) {
                socket.send(text)
                metrics.sent("typing")
            }
            failures.typing.succeeded()
        } catch {
            if !Task.isCancelled { failures.typing.failed(error) }
        }
    }
}
