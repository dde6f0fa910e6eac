import Foundation
import HeraldCore
import HeraldEmulator
import HeraldPostgres
import HeraldTemplates
import HeraldTestSupport
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// Events with more recipients than `fanOutPart` are fanned out part by part, each part in
/// its own transaction, under the worker's lease on the event.
@Suite struct LargeEventTests {
    /// A group of Alice and `people` others in ops, each with one member-app phone
    /// (`crowd-<n>`); returns the conversation.
    func group(_ harness: DispatchHarness, people: Int) async throws -> UUID {
        let emails = (1...people).map { "crowd\($0)@acme.test" }
        try await harness.store.withTenant(harness.tenant) { session in
            for (index, email) in emails.enumerated() {
                _ = try await session.addPerson(email: email, name: "Crowd \(index + 1)")
                _ = try await session.setMembership(team: "ops", email: email, role: .member)
                _ = try await session.registerDevice(email: email, token: "crowd-\(index + 1)", app: .member, platform: .android, provider: .fcm)
            }
        }
        return try await harness.store.withTenant(harness.tenant) { session in
            try await session.createConversation(actor: "alice@acme.test", with: emails, name: "Crowd", photoURL: nil, team: "ops").id
        }
    }

    func send(_ harness: DispatchHarness, to conversation: UUID, _ text: String) async throws {
        _ = try await harness.store.withTenant(harness.tenant) {
            try await $0.sendMessage(actor: "alice@acme.test", conversation: conversation, text: text, clientID: nil, sentAt: nil)
        }
    }

    @Test func partsStartSmallTakeWholeRoundsAndEndSmall() {
        let configuration = Dispatcher.Configuration(fanOutPart: 1_000, fanOutFirstPart: 100)
        // After the first, at most twice the size that makes an event large, in rounds of two
        // of equal size; the last (it marks the event done, after all the others) as small as
        // the first.
        #expect(configuration.fanOutParts(of: 10_000).map(\.count) == [100] + Array(repeating: 1_634, count: 5) + [1_630, 100])
        #expect(configuration.fanOutParts(of: 10_000).first?.lowerBound == 0)
        #expect(configuration.fanOutParts(of: 10_000).last?.upperBound == 10_000)
        for count in [101, 150, 200, 201, 1_001, 2_001, 4_199, 10_000, 12_345] {
            let parts = configuration.fanOutParts(of: count)
            #expect(zip(parts, parts.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound }, "\(count): \(parts)")
            #expect(parts.first?.lowerBound == 0 && parts.last?.upperBound == count && parts.allSatisfy { !$0.isEmpty })
            #expect(parts.allSatisfy { $0.count <= configuration.fanOutLaterPart }, "\(count)")
        }
        #expect(configuration.fanOutParts(of: 50) == [0..<50])
        #expect(configuration.fanOutParts(of: 150).map(\.count) == [100, 50])
        #expect(configuration.fanOutParts(of: 0).isEmpty)
        #expect(
            Dispatcher.Configuration(fanOutPart: 1_000, fanOutFirstPart: 100, fanOutLaterPart: 1_000).fanOutParts(of: 2_500)
                .map(\.count) == [100, 575, 575, 575, 575, 100])
        // A first part larger than a part is cut to a part; no round is cut into parts
        // smaller than the first.
        #expect(Dispatcher.Configuration(fanOutPart: 5, fanOutFirstPart: 100).fanOutParts(of: 12).map(\.count) == [5, 2, 5])
        #expect(Dispatcher.Configuration(fanOutPart: 5, fanOutFirstPart: 2, fanOutLaterPart: 3).fanOutParts(of: 12).map(\.count) == [2, 4, 4, 2])
    }

    /// One part at a time, and the middle parts (5, 5, 5, 5) three at once: each in a
    /// transaction of its own that holds the event and renews its lease.
    @Test(arguments: [1, 3]) func aLargeEventIsFannedOutInPartsOnceForEveryone(concurrency: Int) async throws {
        try await DispatchHarness.with { harness in
            let conversation = try await group(harness, people: 23)
            try await send(harness, to: conversation, "Standup moved to 10")
            // Parts of 2, 5, 5, 5, 5 and 1.
            let counters = try await harness.drain(
                .init(
                    fanOutPart: 5, fanOutFirstPart: 2, fanOutLaterPart: 5, fanOutConcurrency: concurrency,
                    retry: RetryPolicy(base: .milliseconds(50))))
            #expect(counters.eventsFannedOut == 1)
            #expect(counters.deliveriesQueued == 23)
            #expect(counters.deliveriesLeased == 23)
            #expect(counters.sent == 23)
            #expect(try await harness.count("SELECT count(*) FROM notifications WHERE kind = 'chat.message'") == 23)
            #expect(
                try await harness.count(
                    "SELECT count(DISTINCT recipient_id) FROM notifications WHERE kind = 'chat.message'") == 23)
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'sent'") == 23)
            // Done, and nobody holds it any more.
            #expect(
                try await harness.count(
                    "SELECT count(*) FROM outbox WHERE kind = 'chat.message' AND fanned_out_at IS NOT NULL AND lease_owner IS NULL AND lease_expires_at IS NULL"
                ) == 1)
            let tokens = await harness.emulator.messages().map(\.token)
            #expect(tokens.count == 23)
            #expect(Set(tokens) == Set((1...23).map { "crowd-\($0)" }))
        }
    }

    /// A worker fanned out the first part and died holding the event: once its lease lapses
    /// another worker takes the event over, and nobody hears twice.
    @Test func aLapsedFanOutIsTakenOverWithoutDuplicates() async throws {
        try await DispatchHarness.with { harness in
            let conversation = try await group(harness, people: 12)
            try await send(harness, to: conversation, "Lunch is here")
            let tenant = harness.tenant.id
            // The dead worker's part: what its first transaction committed.
            do {
                let event = try await harness.store.pool.query(
                    "SELECT tenant_id, id, kind, payload::text, occurred_at FROM outbox WHERE kind = 'chat.message'"
                ).single().decode((UUID, UUID, String, String, Date).self)
                let snapshot = try JSONDecoder().decode(ChatEventPayload.self, from: Data(event.3.utf8))
                let claimed = ClaimedEvent(
                    tenantID: event.0, id: event.1, kind: event.2, payload: event.3, recipientCount: snapshot.recipients.count,
                    recipients: Array(snapshot.recipients[0..<5]), occurredAt: event.4)
                let payload = try FanOut.payload(of: claimed, decoder: JSONDecoder())
                try await harness.store.pool.withTransaction(setup: Store.tenantScope(tenant)) { connection in
                    let recipients = payload.recipients
                    let profiles = try await DeliveryQueue.profiles(recipients, tenant: tenant, on: connection)
                    let chat = try await DeliveryQueue.participantStates(
                        [conversation], people: recipients.map(\.id), tenant: tenant, on: connection)
                    let catalog = TemplateCatalog()
                    let templates = try await catalog.templates(for: tenant) { _ in [:] }
                    let drafts = try FanOut(templates: catalog).drafts(
                        for: claimed, payload, profiles: profiles, chat: chat, templates: templates, now: Date())
                    #expect(drafts.count == 5)
                    _ = try await DeliveryQueue.write(drafts, events: [], tenant: tenant, deadline: .seconds(60), claim: nil, on: connection)
                    try await connection.query(
                        """
                        UPDATE outbox SET lease_owner = 'dead-worker', lease_expires_at = now() + interval '1 second'
                        WHERE id = \(claimed.id)
                        """)
                }
            }
            #expect(try await harness.count("SELECT count(*) FROM notifications WHERE kind = 'chat.message'") == 5)
            let counters = try await harness.drain(.init(worker: "heir", fanOutPart: 5, retry: RetryPolicy(base: .milliseconds(50))))
            #expect(counters.eventsFannedOut == 1)
            #expect(counters.deliveriesQueued == 7)  // the dead worker's 5 were queued already
            #expect(try await harness.count("SELECT count(*) FROM notifications WHERE kind = 'chat.message'") == 12)
            #expect(
                try await harness.count(
                    "SELECT count(DISTINCT recipient_id) FROM notifications WHERE kind = 'chat.message'") == 12)
            #expect(try await harness.count("SELECT count(*) FROM deliveries") == 12)
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'sent'") == 12)
            #expect(
                try await harness.count(
                    "SELECT count(*) FROM outbox WHERE kind = 'chat.message' AND fanned_out_at IS NOT NULL AND lease_owner IS NULL") == 1)
            let tokens = await harness.emulator.messages().map(\.token)
            #expect(tokens.count == 12)
            #expect(Set(tokens).count == 12)
        }
    }

    /// A worker that stops gives back the event it was fanning out, and only its own.
    @Test func aStoppingWorkerGivesBackItsEventLease() async throws {
        try await DispatchHarness.with { harness in
            let conversation = try await group(harness, people: 3)
            try await send(harness, to: conversation, "First")
            try await send(harness, to: conversation, "Second")
            try await harness.store.pool.query(
                """
                UPDATE outbox SET lease_owner = CASE WHEN seq = (SELECT min(seq) FROM outbox WHERE kind = 'chat.message')
                                                     THEN 'stopping-worker' ELSE 'other-worker' END,
                                  lease_expires_at = now() + interval '1 minute'
                WHERE kind = 'chat.message'
                """)
            try await harness.withDispatcher(.init(worker: "stopping-worker")) { dispatcher in
                try await dispatcher.queue.releaseLeases()
            }
            #expect(
                try await harness.count(
                    "SELECT count(*) FROM outbox WHERE kind = 'chat.message' AND lease_owner IS NULL AND lease_expires_at IS NULL") == 1)
            #expect(try await harness.count("SELECT count(*) FROM outbox WHERE lease_owner = 'other-worker'") == 1)
        }
    }
}
