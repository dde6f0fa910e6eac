import Synchronization

/// Where the outbox's pending events begin, by `seq`: no event below it is pending or can
/// still commit. Fan-out claims start there (`outbox_pending_seq`), so that the versions of
/// events already fanned out, which vacuum cannot remove while another session holds a
/// snapshot, are not walked by every claim.
///
/// A `seq` is taken when its event is inserted, in the transaction that commits it, so an
/// event may commit after a later one. What tells when none below a value can still appear:
/// each refresh notes the database's snapshot and the highest `seq` committed then; once no
/// transaction that snapshot saw in progress is still in progress, every event up to that
/// `seq` is committed or never will be. (An event whose transaction had taken its `seq` but
/// not yet its transaction id when the snapshot was taken, a window of microseconds, could
/// slip below the floor: a full look every `fullLookEvery` finds it.)
///
/// The decisions only; `DeliveryQueue.refreshWindow` runs the statement they need.
final class OutboxFloor: Sendable {
    /// How often the lowest pending event is looked for from the start of the outbox.
    static let fullLookEvery: Duration = .seconds(60)

    /// A snapshot noted at a refresh, and the highest `seq` committed in it.
    struct Mark: Equatable, Sendable {
        let snapshot: String
        let highest: Int64
    }

    private struct State {
        var floor: Int64 = 0
        /// Below this, every event is committed or never will be.
        var settled: Int64 = 0
        /// Marks whose transactions in progress may not all have ended yet, oldest first.
        var marks: [Mark] = []
        var lastFullLook: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    /// The floor claims start at (0 until the first refresh: the whole outbox).
    var value: Int64 { state.withLock { $0.floor } }

    /// What the next refresh asks: where to look for the lowest pending event from (0 for a
    /// full look), and the oldest mark whose transactions it should ask about.
    func nextLook(at now: ContinuousClock.Instant) -> (from: Int64, mark: Mark?) {
        state.withLock { state in
            let full = state.lastFullLook.map { $0.duration(to: now) >= Self.fullLookEvery } ?? true
            return (full ? 0 : state.floor, state.marks.first)
        }
    }

    /// What a refresh found: the lowest pending event at or above where it looked (nil:
    /// none), this snapshot's mark, and whether every transaction the asked mark saw in
    /// progress has ended.
    func update(looked from: Int64, lowestPending: Int64?, mark: Mark, askedMarkSettled: Bool, at now: ContinuousClock.Instant) {
        state.withLock { state in
            if from == 0 { state.lastFullLook = now }
            // What this refresh learnt settles only the next one's floor: a transaction that
            // ended after this refresh's snapshot was taken is not in what it looked at.
            let settledBefore = state.settled
            if askedMarkSettled, let settledMark = state.marks.first {
                state.settled = max(state.settled, settledMark.highest + 1)
                state.marks.removeFirst()
            }
            state.marks.append(mark)
            // A backlog of marks means a transaction stayed open for many refreshes: keep the
            // oldest (the bound) and the newest few.
            if state.marks.count > 64 { state.marks.removeSubrange(1..<(state.marks.count - 32)) }
            state.floor = min(lowestPending ?? .max, settledBefore)
        }
    }
}
