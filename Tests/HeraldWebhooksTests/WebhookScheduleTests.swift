import HeraldCore
import HeraldWebhooks
import Testing

/// The retry schedule and the event patterns of docs/webhooks.md.
@Suite struct WebhookScheduleTests {
    @Test func failuresAreRetriedOnTheScheduleThenTheEndpointIsDisabled() {
        let expected: [Duration] = [.seconds(5), .seconds(300), .seconds(1800), .seconds(7200), .seconds(18_000), .seconds(36_000), .seconds(36_000)]
        for (index, wait) in expected.enumerated() {
            #expect(WebhookRetrySchedule.decide(attempt: index + 1, .status(500)) == .retry(after: wait))
            #expect(WebhookRetrySchedule.decide(attempt: index + 1, .noAnswer("timed out after 10 s")) == .retry(after: wait))
        }
        guard case .disable(let reason) = WebhookRetrySchedule.decide(attempt: 8, .status(503)) else {
            Issue.record("the eighth failure disables the endpoint")
            return
        }
        #expect(reason == "8 attempts failed over 27 hours; the last: HTTP 503")
    }

    @Test func a2xxDeliversAnd410DisablesAtOnce() {
        for status in [200, 201, 204, 299] { #expect(WebhookRetrySchedule.decide(attempt: 1, .status(status)) == .delivered) }
        #expect(WebhookRetrySchedule.decide(attempt: 1, .status(410)) == .disable(reason: "the endpoint answered 410 Gone"))
        for status in [301, 302, 400, 404, 429, 500] {
            #expect(WebhookRetrySchedule.decide(attempt: 3, .status(status)) == .retry(after: .seconds(1800)), "\(status)")
        }
    }

    @Test func patternsNameTypesFamiliesOrEverything() throws {
        let filter = try WebhookEventFilter(commaSeparated: "activity.*, message.created,notification.failed,activity.*")
        #expect(filter.patterns == ["activity.*", "message.created", "notification.failed"])
        #expect(filter.matches(.activity(.activityApproved)) && filter.matches(.activity(.activityOverdue)) && filter.matches(.messageCreated))
        #expect(!filter.matches(.messageRead) && !filter.matches(.notificationSent) && !filter.matches(.deviceDeactivated))
        let everything = try WebhookEventFilter(["*"])
        #expect(WebhookEventType.allCases.allSatisfy(everything.matches))
        for bad in [[], ["activity"], ["activities.*"], ["message.deleted"], [" "], Array(repeating: "x", count: 1)] {
            #expect(throws: InputError.self, "\(bad)") { try WebhookEventFilter(bad) }
        }
        #expect(WebhookEventType(.chatMessage) == .messageCreated && WebhookEventType(.activityEscalated) == .activity(.activityEscalated))
        // Every activity event under its own name, and nothing else under an activity's.
        #expect(WebhookEventType.allCases.filter { $0.rawValue.hasPrefix("activity.") }.map(\.rawValue) == EventKind.activityEvents.map(\.rawValue))
    }
}
