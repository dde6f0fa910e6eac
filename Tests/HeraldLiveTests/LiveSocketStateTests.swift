import Foundation
import Testing

@testable import HeraldLive

/// One socket's decisions: what it sends once, when it closes, its heartbeat, and the app's
/// frames in order.
@Suite struct LiveSocketStateTests {
    let start = ContinuousClock.now

    func socket(position: Int64 = 10, queueLimit: Int = 3) -> LiveSocketState {
        LiveSocketState(position: position, queueLimit: queueLimit, floodRate: 2, floodBurst: 3, now: start)
    }

    @Test func aDurableFrameGoesOnceAndInOrderOfPosition() {
        var state = socket()
        #expect(state.deliver(at: 10) == .skip, "sent by the catch-up already")
        #expect(state.deliver(at: 11) == .write)
        #expect(state.deliver(at: 11) == .skip, "no repeat at the seam")
        state.advance(to: 20)
        #expect(state.deliver(at: 15) == .skip)
        #expect(state.deliver(at: 21) == .write)
        #expect(state.position == 21)
        state.advance(to: 5)
        #expect(state.position == 21, "the position never goes back")
    }

    /// A client that stops reading is closed (1013) once its queue is full, and resumes by
    /// cursor; frames written leave the queue.
    @Test func aSlowClientOverflowsItsQueue() {
        var state = socket(queueLimit: 2)
        #expect(state.deliver(at: 11) == .write)
        #expect(state.send(1) == true)
        #expect(state.deliver(at: 12) == .overflow)
        #expect(state.close() == true)
        #expect(state.deliver(at: 13) == .skip, "closing: nothing more")
        #expect(state.send(1) == false)
        var reading = socket(queueLimit: 2)
        let both = [reading.deliver(at: 11), reading.deliver(at: 12)]
        #expect(both == [.write, .write])
        reading.written(2)
        #expect(reading.deliver(at: 13) == .write)
        #expect(reading.queued == 1)
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
        #expect(state.take("a") == true, "a handler starts")
        #expect(state.take("b") == false, "it runs already")
        #expect(state.nextInbound() == "a")
        #expect(state.nextInbound() == "b")
        #expect(state.nextInbound() == nil)
        #expect(state.take("c") == true, "ended: the next frame starts one again")
    }
}
