import Foundation
import Testing

@testable import HeraldLive

/// One socket's decisions: what it sends once, when it closes, its heartbeat, and the app's
/// frames in order.
@Suite struct LiveSocketStateTests {
    let start = ContinuousClock.now

    func socket(position: Int64 = 10, queueLimit: Int = 3) -> LiveSocketState {
        LiveSocketState(position: position, queueLimit: queueLimit, floodRate: 2, floodBurst: 3, inboxLimit: 3, now: start)
    }

    @Test func aDurableFrameGoesOnceAndInOrderOfPosition() {
        var state = socket()
        #expect(state.deliver(at: 10, now: start) == .skip, "sent by the catch-up already")
        #expect(state.deliver(at: 11, now: start) == .write)
        #expect(state.deliver(at: 11, now: start) == .skip, "no repeat at the seam")
        state.advance(to: 20)
        #expect(state.deliver(at: 15, now: start) == .skip)
        #expect(state.deliver(at: 21, now: start) == .write)
        #expect(state.position == 21)
        state.advance(to: 5)
        #expect(state.position == 21, "the position never goes back")
    }

    /// A client that stops reading is closed (1013) once its queue has been over the limit for
    /// the grace, or far over it, and resumes by cursor; frames written leave the queue.
    @Test func aSlowClientOverflowsItsQueue() {
        var state = socket(queueLimit: 2)
        #expect(state.deliver(at: 11, now: start) == .write)
        #expect(state.send(1) == true)
        // Over the limit: a burst is given its grace, a client that stays behind is not.
        #expect(state.deliver(at: 12, now: start) == .write)
        #expect(state.deliver(at: 13, now: start + .milliseconds(900)) == .write)
        #expect(state.deliver(at: 14, now: start + LiveSocketState.overLimitGrace) == .overflow)
        #expect(state.close() == true)
        #expect(state.deliver(at: 15, now: start) == .skip, "closing: nothing more")
        #expect(state.send(1) == false)
        var reading = socket(queueLimit: 2)
        let both = [reading.deliver(at: 11, now: start), reading.deliver(at: 12, now: start)]
        #expect(both == [.write, .write])
        reading.written(2)
        #expect(reading.deliver(at: 13, now: start) == .write)
        #expect(reading.queued == 1)
        // A client that catches up starts a new grace the next time it falls behind.
        var catching = socket(queueLimit: 2)
        for position in 11...13 { #expect(catching.deliver(at: Int64(position), now: start) == .write) }
        catching.written(3)
        for position in 14...16 {
            #expect(catching.deliver(at: Int64(position), now: start + LiveSocketState.overLimitGrace + .milliseconds(500)) == .write)
        }
        // Far past the limit at once: closed without waiting.
        var flooded = socket(queueLimit: 2)
        let offered = (11...40).map { flooded.deliver(at: Int64($0), now: start) }
        #expect(offered.firstIndex(of: .overflow) == 2 * LiveSocketState.overLimitFactor)
    }

    @Test func onlyTheFirstCloseGoesOut() {
        var state = socket()
        #expect(state.close() == true)
        #expect(state.close() == false)
        var gone = socket()
        gone.ended()
        #expect(gone.close() == false)
        #expect(gone.closing)
    }

    /// A ping each heartbeat; the close (4408) at the heartbeat after an unanswered one; a
    /// close that cannot get out is dropped two heartbeats later.
    @Test func theHeartbeatPingsClosesAndDrops() {
        var state = socket()
        #expect(state.beat() == .ping)
        state.ponged()
        #expect(state.beat() == .ping)
        #expect(state.beat() == .close, "the last ping went unanswered")
        #expect(state.close() == true)
        #expect(state.beat() == .none)
        #expect(state.beat() == .drop)
        #expect(state.beat() == .none)
    }

    @Test func aFloodIsRefusedAndTheBucketRefills() {
        var state = socket()
        let admitted = (0..<3).map { _ in state.admitIncoming(at: start) }
        #expect(admitted == [true, true, true])
        #expect(state.admitIncoming(at: start) == false, "past the burst")
        #expect(state.admitIncoming(at: start + .milliseconds(600)) == true, "a token a half second")
    }

    /// The app's frames are handled one at a time, in order, by one handler that lives only
    /// while there are some.
    @Test func theInboxHasOneHandlerAtATime() {
        var state = socket()
        #expect(state.take("a") == .start, "a handler starts")
        #expect(state.take("b") == .queued, "it runs already")
        #expect(state.nextInbound() == "a")
        #expect(state.nextInbound() == "b")
        #expect(state.nextInbound() == nil)
        #expect(state.take("c") == .start, "ended: the next frame starts one again")
    }

    /// The inbox holds a whole burst the flood limit allows, unless told otherwise: one value.
    @Test func theInboxLimitIsTheFloodBurstUnlessGiven() {
        #expect(LiveSettings().inboxLimit == Int(LiveSettings().floodBurst))
        #expect(LiveSettings(floodBurst: 40).inboxLimit == 40)
        #expect(LiveSettings(floodBurst: 40, inboxLimit: 7).inboxLimit == 7)
    }

    /// What waits unhandled is bounded (an app that sends faster than its frames are handled,
    /// within the flood limit, is closed), and a closed socket's frames are not worked.
    @Test func theInboxIsBoundedAndAClosedSocketsFramesAreDropped() {
        var state = LiveSocketState(position: 0, queueLimit: 10, floodRate: 100, floodBurst: 100, inboxLimit: 3, now: start)
        #expect(state.take("1") == .start)
        #expect(state.take("2") == .queued && state.take("3") == .queued)
        #expect(state.take("4") == .overflow, "a fourth waiting is one too many")
        #expect(state.nextInbound() == nil, "an overflowing inbox is dropped")
        #expect(state.take("5") == .start)
        #expect(state.take("6") == .queued)
        let first = state.close()
        #expect(first)
        #expect(state.nextInbound() == nil, "what waited when it closed is not handled")
        #expect(state.take("7") == .closing)
    }
}
