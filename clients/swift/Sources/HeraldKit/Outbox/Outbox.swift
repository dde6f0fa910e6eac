import Foundation

/// Chat messages sent while offline, or offline at any moment: `send` answers a pending
/// message at once and keeps it in the store; they are sent in order, one at a time, each
/// until the server answers it (the same `clientId` every time, so it is stored once), after
/// a backoff when the server cannot be reached, and at once on `flush()` (a live session
/// calls it when it connects).
public actor Outbox {
    private let client: HeraldClient
    private let store: any OutboxStore
    private let backoff: Backoff
    private var queue: [PendingMessage]
    private var draining: Task<Void, Never>?
    private var sleeping: Task<Void, Never>?
    private var paused = false
    private var closed = false
    private let continuation: AsyncStream<OutboxEvent>.Continuation
    /// What became of each message, in order.
    public nonisolated let events: AsyncStream<OutboxEvent>

    /// Loads what the store kept (a restart's unsent messages) and starts sending them.
    public init(client: HeraldClient, store: any OutboxStore, backoff: Backoff = Backoff()) throws {
        self.client = client
        self.store = store
        self.backoff = backoff
        queue = try store.load()
        (events, continuation) = AsyncStream<OutboxEvent>.makeStream(bufferingPolicy: .unbounded)
        Task { await self.flush() }
    }

    /// The messages not yet stored, oldest first.
    public var pending: [PendingMessage] { queue }

    /// Queues a message (kept in the store before this returns) and starts sending.
    @discardableResult
    public func send(text: String, to conversation: UUID) throws -> PendingMessage {
        let message = PendingMessage(conversation: conversation, text: text)
        try store.save(queue + [message])
        queue.append(message)
        drain()
        return message
    }

    /// Try now: the network came back, a live session connected, the person signed in again.
    public func flush() {
        guard !closed else { return }
        paused = false
        sleeping?.cancel()
        drain()
    }

    /// Stops sending (the messages stay in the store for the next `Outbox`).
    public func close() {
        closed = true
        paused = true
        draining?.cancel()
        sleeping?.cancel()
        continuation.finish()
    }

    private func drain() {
        guard draining == nil, !paused, !queue.isEmpty else { return }
        draining = Task { await self.sendAll() }
    }

    private func sendAll() async {
        var attempt = 0
        while let next = queue.first, !paused, !Task.isCancelled {
            do {
                let (message, _) = try await client.send(text: next.text, to: next.conversation, clientId: next.clientId, sentAt: next.createdAt)
                remove(next)
                continuation.yield(.sent(next, message))
                attempt = 0
            } catch let error as HeraldError {
                if case .unauthorized = error {
                    paused = true
                    continuation.yield(.unauthorized)
                } else if error.isTransient {
                    await pause(attempt: attempt, atLeast: error.retryAfter)
                    attempt += 1
                } else {
                    remove(next)
                    continuation.yield(.failed(next, error))
                }
            } catch {
                // Another transport's own error: tried again, as the network's are.
                await pause(attempt: attempt, atLeast: nil)
                attempt += 1
            }
        }
        draining = nil
    }

    private func remove(_ message: PendingMessage) {
        queue.removeAll { $0.clientId == message.clientId }
        try? store.save(queue)
    }

    /// Waits the `attempt`-th backoff (or what the server asked, if longer), or until `flush()`.
    private func pause(attempt: Int, atLeast seconds: Int?) async {
        let wait = max(backoff.delay(attempt: attempt, jitter: Double.random(in: 0..<1)), .seconds(seconds ?? 0))
        let sleeper = Task { _ = try? await Task.sleep(for: wait) }
        sleeping = sleeper
        await sleeper.value
        sleeping = nil
    }
}
