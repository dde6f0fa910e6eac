import Testing

@testable import HeraldWebhooks

/// How long the sender's next round waits (docs/webhooks.md): the long wait only when nothing
/// is claimed and nothing is in flight. A round that found every slot of an endpoint still
/// held (answered, not yet recorded) waited 20 ms, and the sender delivered about 350 events a
/// second whatever the receiver's speed.
@Suite struct WebhookGatheringTests {
    @Test func aRoundWaitsLongOnlyWhenNothingIsClaimedOrInFlight() {
        #expect(WebhookSender.gathering(claimed: 0, inFlight: 0) == WebhookSender.gathering)
        #expect(WebhookSender.gathering(claimed: 3, inFlight: 3) == WebhookSender.busyGathering)
        // Every slot held, none free to claim: the record that frees one wakes a prompt round.
        #expect(WebhookSender.gathering(claimed: 0, inFlight: 10) == WebhookSender.busyGathering)
        #expect(WebhookSender.busyGathering < WebhookSender.gathering)
    }
}
