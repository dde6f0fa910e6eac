import Synchronization

/// Where one webhook feeder's rounds reached in the live feed (`Store.feedWebhooks`): ahead of
/// the stored cursor while the rounds wrote no message, so the cursor row is not written every
/// round. In memory only: a feeder that starts again starts at the stored cursor, at most
/// `WebhookQueue.cursorLag` positions behind.
public final class WebhookFeedFloor: Sendable {
    private let reachedPosition = Atomic<Int64>(0)

    public init() {}

    /// The position every row up to which this feeder has read.
    public var position: Int64 { reachedPosition.load(ordering: .relaxed) }

    /// A committed round read up to `position`.
    func reached(_ position: Int64) {
        var current = reachedPosition.load(ordering: .relaxed)
        while position > current {
            let (exchanged, original) = reachedPosition.compareExchange(expected: current, desired: position, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}
