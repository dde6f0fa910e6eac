/// A loop's wake-up: any number of `wake()`s before the loop looks again count as one.
final class LiveWake: Sendable {
    let wakes: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (wakes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func wake() {
        continuation.yield()
    }

    /// Ends the loop that reads `wakes`.
    func finish() {
        continuation.finish()
    }
}
