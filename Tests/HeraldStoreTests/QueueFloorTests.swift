import Testing

@testable import HeraldStore

/// `QueueFloor`'s decisions: where fan-out claims start, so that the versions of events
/// already fanned out that a held snapshot keeps are not walked, and never above an event that
/// is pending or may still commit.
@Suite struct QueueFloorTests {
    let start = ContinuousClock.now

    func mark(_ highest: Int64) -> QueueFloor.Mark { QueueFloor.Mark(snapshot: "\(highest):\(highest):", highest: highest) }

    @Test func theFloorRisesOnlyPastTransactionsThatEndedBeforeTheLookBegan() {
        let floor = QueueFloor()
        #expect(floor.value == 0)
        // First refresh: nothing known settled yet.
        var look = floor.nextLook(at: start)
        #expect(look.from == 0 && look.mark == nil)
        floor.update(looked: look.from, lowestPending: nil, mark: mark(100), askedMarkSettled: false, at: start)
        #expect(floor.value == 0)
        // Second: the first mark's transactions have ended, which settles up to 100, but only
        // for the next look (one that ended after this look's snapshot is not in it).
        look = floor.nextLook(at: start + .seconds(1))
        #expect(look.from == 0 && look.mark == mark(100))
        floor.update(looked: look.from, lowestPending: nil, mark: mark(180), askedMarkSettled: true, at: start + .seconds(1))
        #expect(floor.value == 0)
        look = floor.nextLook(at: start + .seconds(2))
        #expect(look.mark == mark(180))
        floor.update(looked: look.from, lowestPending: nil, mark: mark(250), askedMarkSettled: true, at: start + .seconds(2))
        #expect(floor.value == 101)
        // A pending event below what is settled holds the floor at it.
        look = floor.nextLook(at: start + .seconds(3))
        #expect(look.from == 101)
        floor.update(looked: look.from, lowestPending: 150, mark: mark(300), askedMarkSettled: true, at: start + .seconds(3))
        #expect(floor.value == 150)
    }

    @Test func aTransactionStillInProgressHoldsTheFloorWhereItWas() {
        let floor = QueueFloor()
        var now = start
        floor.update(looked: 0, lowestPending: nil, mark: mark(10), askedMarkSettled: false, at: now)
        for highest in stride(from: Int64(20), through: 200, by: 10) {
            now += .seconds(1)
            // The transaction the first mark saw in progress never ends.
            floor.update(looked: floor.nextLook(at: now).from, lowestPending: nil, mark: mark(highest), askedMarkSettled: false, at: now)
            #expect(floor.value == 0)
        }
        #expect(floor.nextLook(at: now).mark == mark(10))
    }

    @Test func everyMinuteTheLookStartsFromTheBeginning() {
        let floor = QueueFloor()
        floor.update(looked: 0, lowestPending: nil, mark: mark(10), askedMarkSettled: false, at: start)
        floor.update(looked: 0, lowestPending: nil, mark: mark(20), askedMarkSettled: true, at: start + .seconds(1))
        floor.update(looked: 0, lowestPending: nil, mark: mark(30), askedMarkSettled: true, at: start + .seconds(2))
        #expect(floor.value == 11)
        #expect(floor.nextLook(at: start + .seconds(30)).from == 11)
        // (The last look from 0 was the third, at 2 s.)
        #expect(floor.nextLook(at: start + .seconds(61)).from == 11)
        #expect(floor.nextLook(at: start + .seconds(62)).from == 0)
        // A straggler a full look finds brings the floor down to it.
        floor.update(looked: 0, lowestPending: 5, mark: mark(40), askedMarkSettled: true, at: start + .seconds(62))
        #expect(floor.value == 5)
    }
}
