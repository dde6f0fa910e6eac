import Synchronization
import Testing

@testable import HeraldHTTP

struct InFlightLimiterTests {
    /// Thousands of callers past the bound (a large fan-out) are let in one per release, in
    /// the order they came.
    @Test func queuedCallersAreAdmittedInArrivalOrder() async throws {
        let limiter = InFlightLimiter(limit: 1)
        try await limiter.acquire()
        let admitted = Log<Int>()
        let callers = 20_000
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<callers {
                group.addTask {
                    try await limiter.acquire()
                    admitted.append(index)
                    limiter.release()
                }
                // Each caller stands in the line before the next one comes.
                while limiter.waiting <= index { await Task.yield() }
            }
            limiter.release()
            try await group.waitForAll()
        }
        #expect(admitted.entries == Array(0..<callers))
        #expect(limiter.waiting == 0)
    }

    /// An urgent caller passes the queued ones and takes a reserved slot that they may not.
    @Test func anUrgentCallerPassesTheLineIntoTheReserve() async throws {
        let limiter = InFlightLimiter(limit: 2, reserve: 1)
        try await limiter.acquire()  // the one slot open to everyone
        let order = Log<String>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await limiter.acquire()
                order.append("send")
            }
            while limiter.waiting < 1 { await Task.yield() }
            try await limiter.acquire(urgent: true)  // the reserve, at once
            order.append("token")
            limiter.release()  // the token's slot back: the reserve, not for the send
            #expect(limiter.waiting == 1)
            limiter.release()
            try await group.waitForAll()
        }
        #expect(order.entries == ["token", "send"])
    }

    /// A cancelled caller leaves the line without taking a slot; the one behind it gets it.
    @Test func aCancelledCallerLeavesTheLine() async throws {
        let limiter = InFlightLimiter(limit: 1)
        try await limiter.acquire()
        let leaving = Task { try await limiter.acquire() }
        while limiter.waiting < 1 { await Task.yield() }
        let staying = Task { try await limiter.acquire() }
        while limiter.waiting < 2 { await Task.yield() }
        leaving.cancel()
        await #expect(throws: CancellationError.self) { try await leaving.value }
        #expect(limiter.waiting == 1)
        limiter.release()
        try await staying.value
        #expect(limiter.waiting == 0)
    }
}

/// What the callers did, in order.
private final class Log<Entry: Sendable>: Sendable {
    private let list = Mutex<[Entry]>([])
    func append(_ entry: Entry) { list.withLock { $0.append(entry) } }
    var entries: [Entry] { list.withLock { $0 } }
}
