import HeraldCore
import Testing

/// When a notification goes by email too (docs/notifications.md#email).
@Suite struct EmailReachTests {
    @Test func theChannelDecidesAndAP0BreaksThroughEmailTurnedOff() {
        #expect(EmailReach.of(.activityAssigned, forActor: false) == .whenNoDevice)
        #expect(EmailReach.of(.activityUnopened, forActor: true) == .always)
        #expect(EmailReach.of(.activityUnopened, forActor: false) == .whenNoDevice)
        #expect(EmailReach.of(.chatMessage, forActor: false, channel: .both) == .always)
        #expect(EmailReach.of(.activityApproved, forActor: false, channel: .email) == .only)
        #expect(EmailReach.of(.activityAssigned, forActor: false, channel: .pushOnly, priority: .p1) == .never)
        #expect(EmailReach.of(.activityAssigned, forActor: false, channel: .pushOnly, priority: .p0) == .whenNoDevice)
        #expect(EmailReach.of(.chatMessage, forActor: false, channel: .pushOnly, priority: .p0) == .never)
    }
}
