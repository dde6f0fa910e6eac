import Synchronization

/// Where the pending rows of a queue table ordered by an identity column begin (the outbox
/// by `seq`, the live channel's `live_pending` by `id`): no row below it is pending or can
/// still commit. Claims start there, so that the versions of rows already taken, which vacuum
/// cannot remove while another session holds a snapshot (a report, pg_dump, a forgotten psql
/// session), are not walked by every claim.
///
/// A row's number is taken when it is inserted, in the transaction that commits it, so a row
/// may commit after a later one. What tells when none below a number can still appear: each
/// look notes the database's snapshot and the highest number committed then; once no
/// transaction that snapshot saw in progress is still in progress, every row up to that
/// number is committed or never will be. (A row whose transaction had taken its number but
/// not yet its transaction id when the snapshot was taken, a window of microseconds, could
/// slip below the floor: a full look every `fullLookEvery` finds it.)
///
/// The decisions only; `DeliveryQueue.refreshWindow` and `Store.sequenceLive` run the
/// statements they need.
public final class QueueFloor: Sendable {
    /// How often the lowest pending row is looked for from the start of the table.
    static let fullLookEvery: Duration = .seconds(60)

    /// A snapshot noted at a look, and the highest number committed in it.
    struct Mark: Equatable, Sendable {
        let snapshot: String
        let highest: Int64
    }

    private struct State {
        var floor: Int64 = 0
        /// Below this, every row is committed or never will be.
        var settled: Int64 = 0
        /// The highest number seen committed so far (a queue whose rows are deleted as they
        /// are taken may be empty when looked at).
        var highest: Int64 = 0
        /// Marks whose transactions in progress may not all have ended yet, oldest first.
        var marks: [Mark] = []
        var lastFullLook: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    public init() {}

    /// The floor claims start at (0 until the first looks: the whole table).
    var value: Int64 { state.withLock { $0.floor } }

    /// What the next look asks: where to look for the lowest pending row from (0 for a full
    /// look), and the oldest mark whose transactions it should ask about.
    func nextLook(at now: ContinuousClock.Instant) -> (from: Int64, mark: Mark?) {
        state.withLock { state in
            let full = state.lastFullLook.map { $0.duration(to: now) >= Self.fullLookEvery } ?? true
            return (full ? 0 : state.floor, state.marks.first)
        }
    }

    /// What a look found: the lowest pending row at or above where it looked (nil:
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
            state.highest = max(state.highest, mark.highest)
            state.marks.append(Mark(snapshot: mark.snapshot, highest: state.highest))
            // A backlog of marks means a transaction stayed open for many refreshes: keep the
            // oldest (the bound) and the newest few.
            if state.marks.count > 64 { state.marks.removeSubrange(1..<(state.marks.count - 32)) }
            state.floor = min(lowestPending ?? .max, settledBefore)
        }
    }
}
