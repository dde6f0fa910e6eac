import Foundation
import HeraldCore
import Testing

@Suite struct TypingThrottleTests {
    func admit(_ throttle: inout TypingThrottle, _ key: TypingThrottle.Key, at now: Date) -> Bool {
        throttle.admit(key, at: now)
    }

    @Test func oneFrameEveryIntervalPerPersonAndConversation() {
        var throttle = TypingThrottle(interval: .seconds(3))
        let start = Date(timeIntervalSince1970: 1_795_303_800)
        let bob = TypingThrottle.Key(person: UUID(), conversation: UUID())
        let bobElsewhere = TypingThrottle.Key(person: bob.person, conversation: UUID())
        let carol = TypingThrottle.Key(person: UUID(), conversation: bob.conversation)
        // 990 frames over 4.2 s (ten sockets of Bob's): two are told.
        var told = 0
        for frame in 0..<990 where throttle.admit(bob, at: start + .milliseconds(frame * 42 / 10)) { told += 1 }
        #expect(told == 2)
        // Another conversation of his, and someone else in the same one, are told at once.
        #expect(admit(&throttle, bobElsewhere, at: start + .seconds(1)))
        #expect(admit(&throttle, carol, at: start + .seconds(1)))
        #expect(!admit(&throttle, carol, at: start + .milliseconds(3_999)))
        #expect(admit(&throttle, carol, at: start + .seconds(4)))
    }

    @Test func manyPeopleDoNotGrowItForEver() {
        var throttle = TypingThrottle(interval: .seconds(3))
        let start = Date(timeIntervalSince1970: 1_795_303_800)
        for second in 0..<100 {
            for _ in 0..<100 { _ = throttle.admit(.init(person: UUID(), conversation: UUID()), at: start + .seconds(second * 10)) }
        }
        // Told once each, and a person typing again after the interval is told again.
        let key = TypingThrottle.Key(person: UUID(), conversation: UUID())
        #expect(admit(&throttle, key, at: start + .seconds(2_000)))
        #expect(admit(&throttle, key, at: start + .seconds(2_003)))
    }
}

extension Date {
    fileprivate static func + (date: Date, duration: Duration) -> Date {
        date.addingTimeInterval(duration.timeInterval)
    }
}
