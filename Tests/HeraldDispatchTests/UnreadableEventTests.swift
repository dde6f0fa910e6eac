import Foundation
import HeraldCore
import HeraldEmulator
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// An event whose snapshot this version cannot read is passed over (marked done and left in
/// the outbox), and never stops the events behind it. The claim reads the recipients apart
/// from the snapshot, so a claim must not fail on any shape of it.
@Suite struct UnreadableEventTests {
    @Test func recipientsAreReadOnlyWhenEveryIdAndAppIs() {
        let person = UUID()
        let id = person.uuidString.lowercased()
        #expect(
            DeliveryQueue.recipients(ids: [id, id.uppercased()], apps: ["member", "manager"])
                == [EventRecipient(id: person, app: .member), EventRecipient(id: person, app: .manager)])
        #expect(DeliveryQueue.recipients(ids: [], apps: []) == [])
        #expect(DeliveryQueue.recipients(ids: nil, apps: nil) == nil)
        #expect(DeliveryQueue.recipients(ids: [id], apps: []) == nil)
        #expect(DeliveryQueue.recipients(ids: [nil], apps: ["member"]) == nil)
        #expect(DeliveryQueue.recipients(ids: [id], apps: [nil]) == nil)
        #expect(DeliveryQueue.recipients(ids: ["not-a-uuid"], apps: ["member"]) == nil)
        #expect(DeliveryQueue.recipients(ids: [id], apps: ["admin"]) == nil)
    }

    /// Chidi and Dana, each with a phone, in a conversation with Alice; returns how Alice
    /// sends it a message.
    func conversation(_ harness: DispatchHarness) async throws -> @Sendable (String) async throws -> Void {
        try await harness.register("chidi@acme.test", token: "chidi-phone", app: .member)
        try await harness.register("dana@acme.test", token: "dana-phone", app: .member)
        let conversation = try await harness.store.withTenant(harness.tenant) { session in
            try await session.createConversation(
                actor: "alice@acme.test", with: ["chidi@acme.test", "dana@acme.test"], name: "Ops", photoURL: nil, team: "ops"
            ).id
        }
        return { text in
            _ = try await harness.store.withTenant(harness.tenant) {
                try await $0.sendMessage(actor: "alice@acme.test", conversation: conversation, text: text, clientID: nil, sentAt: nil)
            }
        }
    }

    @Test func badSnapshotsArePassedOverAndTheRestIsSent() async throws {
        try await DispatchHarness.with { harness in
            let send = try await conversation(harness)
            try await send("before")
            // Copies of that event, each broken in one way, queued between two good ones.
            for (index, broken) in [
                "jsonb_set(payload, '{recipients}', '\"everyone\"')",
                "jsonb_set(payload, '{recipients}', '[{\"id\": \"nobody\", \"app\": \"member\"}]')",
                "jsonb_set(payload, '{recipients}', '[7]')",
                "payload - 'recipients'",
                "'[1, 2]'::jsonb"
            ].enumerated() {
                try await harness.store.pool.query(
                    """
                    INSERT INTO outbox (tenant_id, id, kind, actor_id, recipient_ids, payload, occurred_at)
                    SELECT tenant_id, herald_child_id(id, \("broken-\(index)")), kind, actor_id, recipient_ids, \(unsafeRaw: broken), occurred_at
                    FROM outbox WHERE kind = 'chat.message' ORDER BY seq LIMIT 1
                    """)
            }
            try await send("after")
            let counters = try await harness.drain()
            #expect(counters.eventsPassedOver == 5 && counters.fanOutFailures == 5)
            #expect(try await harness.count("SELECT count(*) FROM outbox WHERE fanned_out_at IS NULL") == 0)
            #expect(try await harness.count("SELECT count(*) FROM outbox WHERE kind = 'chat.message'") == 7)
            #expect(try await harness.count("SELECT count(*) FROM notifications WHERE kind = 'chat.message'") == 4)
            // Passed over at once, each with why.
            #expect(
                try await harness.count(
                    "SELECT count(*) FROM outbox WHERE passed_over_at IS NOT NULL AND fan_out_failures = 1 AND fan_out_error LIKE '%cannot be read%'")
                    == 5)
            let tokens = await harness.emulator.messages().map(\.token)
            #expect(tokens.sorted() == ["chidi-phone", "chidi-phone", "dana-phone", "dana-phone"])
        }
    }

    /// A large event reads its recipients part by part: one that cannot be read in a later
    /// part ends the event there (the parts before it were sent), and the queue goes on.
    @Test func aLargeEventWithABadRecipientInALaterPartEndsThere() async throws {
        try await DispatchHarness.with { harness in
            let send = try await conversation(harness)
            try await send("hello")
            try await harness.store.pool.query(
                "UPDATE outbox SET payload = jsonb_set(payload, '{recipients,1,id}', '\"nobody\"') WHERE kind = 'chat.message'")
            try await send("after")
            let counters = try await harness.drain(
                .init(fanOutPart: 1, fanOutFirstPart: 1, retry: RetryPolicy(base: .milliseconds(100), cap: .seconds(2))))
            #expect(counters.deliveriesQueued == 3)
            #expect(counters.eventsPassedOver == 1)
            #expect(try await harness.count("SELECT count(*) FROM outbox WHERE fanned_out_at IS NULL OR lease_owner IS NOT NULL") == 0)
            #expect(try await harness.count("SELECT count(*) FROM notifications WHERE kind = 'chat.message'") == 3)
            #expect(
                try await harness.count(
                    "SELECT count(*) FROM outbox WHERE passed_over_at IS NOT NULL AND fan_out_error = 'recipients from position 1 on cannot be read'")
                    == 1)
            #expect(await harness.emulator.messages().count == 3)
        }
    }
}
