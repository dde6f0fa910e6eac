import Foundation
import HeraldCore
import HeraldTesting
import Testing

/// The per-recipient decision, as a pure function of the recipient and the instant.
struct DeliveryDecisionTests {
    /// Chidi, in Tokyo, with quiet hours 22:00-07:00 every day.
    func chidi(preferences: NotificationPreferences = NotificationPreferences()) throws -> DeliveryDecision.Recipient {
        DeliveryDecision.Recipient(
            app: .member, timeZone: "Asia/Tokyo", preferences: preferences, quietHours: try QuietHours.parse("22:00-07:00", days: nil))
    }

    /// 23:30 in Tokyo: inside the quiet hours.
    var night: Date { get throws { try instant("2026-11-23T14:30:00Z") } }
    /// 12:00 in Tokyo.
    var noon: Date { get throws { try instant("2026-11-23T03:00:00Z") } }

    @Test func quietHoursDeferUntilTheyEndOnTheRecipientsClock() throws {
        let decided = DeliveryDecision.decide(.activityAssigned, priority: .p1, for: try chidi(), at: try night)
        #expect(decided.decision == .quietHours)
        #expect(decided.deferredUntil == (try instant("2026-11-23T22:00:00Z")))
        #expect(decided.reason == "quiet_hours: deferred until 2026-11-24 07:00 (Asia/Tokyo)")
        #expect(DeliveryDecision.decide(.activityAssigned, priority: .p1, for: try chidi(), at: try noon).decision == .send)
    }

    @Test func p0ActivityEventsBreakThroughPreferencesAndQuietHoursButChatNever() throws {
        let off = NotificationPreferences(own: [.init(event: .activityAssigned, app: .member): .off, .init(event: .chatMessage, app: .member): .off])
        #expect(DeliveryDecision.decide(.activityAssigned, priority: .p0, for: try chidi(preferences: off), at: try night).decision == .send)
        let chat = DeliveryDecision.decide(
            .chatMessage, priority: nil, for: try chidi(preferences: off), in: .init(muted: false, viewing: false, deferred: 0), at: try noon)
        #expect(chat.decision == .preferenceOff)
        #expect(chat.reason == "preference_off: they turned chat.message off on the member app")
    }

    @Test func viewingBeatsEverythingAndMutedIsPushedSilently() throws {
        let viewing = DeliveryDecision.decide(
            .chatMessage, priority: nil, for: try chidi(), in: .init(muted: true, viewing: true, deferred: 3), at: try night)
        #expect(viewing.decision == .viewing)
        #expect(viewing.reason == "viewing: the conversation is open on their device")
        let muted = DeliveryDecision.decide(
            .chatMessage, priority: nil, for: try chidi(), in: .init(muted: true, viewing: false, deferred: 0), at: try noon)
        #expect(muted.decision == .muted)
        #expect(!muted.sound)
    }

    @Test func aDeferredChatPushSummarisesTheOnesWaitingBeforeIt() throws {
        let first = DeliveryDecision.decide(
            .chatMessage, priority: nil, for: try chidi(), in: .init(muted: false, viewing: false, deferred: 0), at: try night)
        #expect(first.decision == .quietHours && first.summarizes == nil)
        let third = DeliveryDecision.decide(
            .chatMessage, priority: nil, for: try chidi(), in: .init(muted: false, viewing: false, deferred: 2), at: try night)
        #expect(third.summarizes == 3)
    }

    @Test func aDigestGathersWhatThePersonChoseButNeverP0() throws {
        let digest = NotificationPreferences(own: [
            .init(event: .activityAssigned, app: .member): .digest, .init(event: .chatMessage, app: .member): .digest
        ])
        // Chosen by the person: even an assignment is gathered, even in quiet hours (the digest waits them out).
        #expect(DeliveryDecision.decide(.activityAssigned, priority: .p2, for: try chidi(preferences: digest), at: try night).decision == .digest)
        #expect(DeliveryDecision.decide(.activityAssigned, priority: .p0, for: try chidi(preferences: digest), at: try noon).decision == .send)
        let chat = DeliveryDecision.decide(
            .chatMessage, priority: nil, for: try chidi(preferences: digest), in: .init(muted: true, viewing: false, deferred: 0), at: try noon)
        #expect(chat.decision == .digest)
        // Someone viewing the conversation hears nothing, digest or not.
        let viewing = DeliveryDecision.decide(
            .chatMessage, priority: nil, for: try chidi(preferences: digest), in: .init(muted: false, viewing: true, deferred: 0), at: try noon)
        #expect(viewing.decision == .viewing)
    }

    @Test func aConversationsOwnSettingWinsOverChatMessage() throws {
        let digest = NotificationPreferences(own: [.init(event: .chatMessage, app: .member): .digest])
        let immediate = DeliveryDecision.decide(
            .chatMessage, priority: nil, for: try chidi(preferences: digest),
            in: .init(muted: false, viewing: false, deferred: 0, mode: .immediate), at: try noon)
        #expect(immediate.decision == .send)
        let off = DeliveryDecision.decide(
            .chatMessage, priority: nil, for: try chidi(), in: .init(muted: false, viewing: false, deferred: 0, mode: .off), at: try noon)
        #expect(off.decision == .preferenceOff && off.reason == "preference_off: they turned this conversation off")
        let gathered = DeliveryDecision.decide(
            .chatMessage, priority: nil, for: try chidi(), in: .init(muted: false, viewing: false, deferred: 0, mode: .digest), at: try noon)
        #expect(gathered.decision == .digest)
    }

    /// A tenant's `digest` default gathers what merely informs, never what asks the person to
    /// act: an assignment to its assignee, a request for approval to the manager.
    @Test func theTenantsDigestLeavesWhatAsksToActImmediate() {
        let tenant = NotificationPreferences(tenant: [
            .init(event: .activityAssigned, app: .member): .digest, .init(event: .activityCompletionRequested, app: .manager): .digest,
            .init(event: .activityStarted, app: .manager): .digest
        ])
        #expect(tenant.mode(.activityAssigned, app: .member, priority: .p2) == .immediate)
        #expect(tenant.mode(.activityCompletionRequested, app: .manager, priority: .p2) == .immediate)
        #expect(tenant.mode(.activityStarted, app: .manager, priority: .p2) == .digest)
        #expect(tenant.mode(.activityStarted, app: .manager, priority: .p0) == .immediate)
        var own = tenant
        own.own[.init(event: .activityAssigned, app: .member)] = .digest
        #expect(own.mode(.activityAssigned, app: .member, priority: .p2) == .digest)
        #expect(NotificationPreferences().mode(.activityStarted, app: .manager, priority: .p3) == .immediate)
    }
}
