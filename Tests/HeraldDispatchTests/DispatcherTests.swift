import Foundation
import HeraldCore
import HeraldEmulator
import HeraldPostgres
import HeraldPush
import HeraldTestSupport
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

@Suite struct DispatcherTests {
    @Test func aManagerHearsOfAStartOnManagerAppDevicesOnly() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register(
                "alice@acme.test", token: "a11ce0000000000000000000000000000000000000000000000000000000000a", app: .manager, platform: .ios,
                provider: .apns)
            try await harness.register("alice@acme.test", token: "alice-manager-tablet-2", app: .manager)
            try await harness.register("alice@acme.test", token: "alice-member-phone-3", app: .member)
            try await harness.register("chidi@acme.test", token: "chidi-member-phone-1", app: .member)
            let activity = try await harness.assign()
            _ = try await harness.drain()
            await harness.emulator.clearMessages()

            try await harness.act(.start, activity.id, by: "chidi@acme.test")
            let counters = try await harness.drain()
            let messages = await harness.emulator.messages()
            #expect(Set(messages.map(\.token)) == ["a11ce0000000000000000000000000000000000000000000000000000000000a", "alice-manager-tablet-2"])
            #expect(messages.count == 2)
            #expect(counters.sent == 2)
            let apns = try #require(messages.first { $0.provider == "apns" })
            #expect(apns.headers["apns-topic"] == "com.example.herald.manager")
            #expect(messages.allSatisfy { $0.body?.contains("Chidi Okafor has started activity") == true })
            // The actor (Chidi) hears nothing of his own start.
            let started = try await harness.history(.init(event: "activity.started"))
            #expect(started.map(\.recipient.email) == ["alice@acme.test"])
            #expect(started.first?.status == "sent" && started.first?.devicesSent == 2)
        }
    }

    @Test func aDeadTokenIsRetiredAndTheOtherDevicesStillGetTheMessage() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone-0001", app: .member)
            try await harness.register("chidi@acme.test", token: "dead-chidi-old-phone", app: .member)
            try await harness.register(
                "chidi@acme.test", token: "c41d1ab1e70000000000000000000000000000000000000000000000000000b2", app: .member, platform: .ios,
                provider: .apns)
            _ = try await harness.assign()
            let counters = try await harness.drain()
            #expect(counters.sent == 2 && counters.deadTokens == 1 && counters.retried == 0)
            #expect(
                Set(await harness.emulator.messages().map(\.token)) == [
                    "chidi-phone-0001", "c41d1ab1e70000000000000000000000000000000000000000000000000000b2"
                ])

            let devices = try await harness.store.withTenant(harness.tenant) {
                try await $0.devices(viewer: AccessPolicy(nil), email: "chidi@acme.test")
            }
            let dead = try #require(devices.first { $0.token == "dead-chidi-old-phone" })
            #expect(dead.state == "deactivated")
            #expect(dead.deactivationReason?.contains("UNREGISTERED") == true)
            #expect(devices.filter { $0.state == "active" }.count == 2)

            // Tried once, never again, and history says so.
            #expect(try await harness.count("SELECT count(*) FROM delivery_attempt_history WHERE outcome = 'dead_token'") == 1)
            let entry = try #require(try await harness.history().first)
            let detail = try await harness.store.withTenant(harness.tenant) {
                try await $0.historyDetail(viewer: "root@acme.test", id: entry.id)
            }
            let deadDelivery = try #require(detail.deliveries.first { $0.status == "dead_token" })
            #expect(deadDelivery.deviceState == "deactivated" && deadDelivery.attempts.count == 1)
            #expect(deadDelivery.attempts.first?.httpStatus == 404)
            #expect(!deadDelivery.tokenPreview.contains("old-phone"))

            // A later event does not even try the dead device.
            await harness.emulator.clearMessages()
            _ = try await harness.assign(name: "Second")
            _ = try await harness.drain()
            #expect(
                Set(await harness.emulator.messages().map(\.token)) == [
                    "chidi-phone-0001", "c41d1ab1e70000000000000000000000000000000000000000000000000000b2"
                ])
            #expect(try await harness.count("SELECT count(*) FROM delivery_attempt_history WHERE outcome = 'dead_token'") == 1)
        }
    }

    @Test func aRecipientWithoutDevicesIsRecordedAsNoDevice() async throws {
        try await DispatchHarness.with { harness in
            _ = try await harness.assign()
            let counters = try await harness.drain()
            #expect(counters.eventsFannedOut == 1 && counters.deliveriesQueued == 0)
            let entries = try await harness.history(as: "chidi@acme.test")
            #expect(entries.count == 1)
            #expect(entries.first?.status == "no_device")
            #expect(entries.first?.reason == "no active device on the member app")
            #expect(await harness.emulator.messages().isEmpty)
        }
    }

    /// 30% of sends fail with 503 (FCM) or 503/429 (APNs) and Retry-After: 1. Every delivery
    /// ends sent, and no attempt comes before the Retry-After of the one it follows.
    @Test func failuresAreRetriedAndNeverBeforeTheirRetryAfter() async throws {
        try await DispatchHarness.with(faults: .init(unavailableShare: 0.3, retryAfterSeconds: 1)) { harness in
            try await harness.registerMany("chidi@acme.test", count: 40, prefix: "fcm-token-")
            try await harness.registerMany("dana@acme.test", count: 40, prefix: "apns-token-", provider: .apns)
            _ = try await harness.assign()
            _ = try await harness.assign(to: "dana@acme.test")
            var counters = try await harness.drain(horizon: .seconds(30))
            #expect(counters.retried > 0)
            // APNs has no 60-second floor on 429, so both 503 and 429 can be seen quickly.
            await harness.emulator.setFaults(.init(unavailableShare: 0.15, throttledShare: 0.15, retryAfterSeconds: 1))
            _ = try await harness.assign(to: "dana@acme.test", name: "Again")
            counters = try await harness.drain(horizon: .seconds(30))

            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status <> 'sent'") == 0)
            #expect(try await harness.count("SELECT count(*) FROM deliveries") == 120)
            // Every retried attempt started at or after the Retry-After that Herald received (a 503
            // or 429 answer) and its own next_attempt_at. What is promised is "never before a
            // Retry-After Herald was told": a request that timed out in transit may still have
            // reached the provider and been answered with one Herald never saw; such an attempt
            // is recorded without an HTTP status and retried on Herald's own backoff.
            let early = try await harness.count(
                """
                SELECT count(*) FROM delivery_attempt_history a JOIN delivery_attempt_history b
                  ON b.tenant_id = a.tenant_id AND b.delivery_id = a.delivery_id AND b.attempt = a.attempt + 1
                WHERE a.outcome = 'retry'
                  AND (b.started_at < a.next_attempt_at
                       OR (a.http_status IN (429, 503) AND b.started_at < a.finished_at + interval '1 second'))
                """)
            #expect(early == 0)
            #expect(try await harness.count("SELECT count(*) FROM delivery_attempt_history WHERE outcome = 'retry' AND http_status = 429") > 0)
            #expect(try await harness.count("SELECT count(*) FROM delivery_attempt_history WHERE outcome = 'retry' AND http_status = 503") > 0)
        }
    }

    @Test func fanOutIsIdempotent() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone-0001", app: .member)
            try await harness.register("chidi@acme.test", token: "chidi-phone-0002", app: .member)
            let activity = try await harness.assign()
            let tenant = harness.tenant.id
            let drafts = [
                NotificationDraft(
                    eventID: try await eventID(harness, activity.id), kind: .activityAssigned,
                    recipientID: try await harness.store.withTenant(harness.tenant) { try await $0.person(email: "chidi@acme.test").id },
                    app: .member, teamID: nil, activityID: activity.id, conversationID: nil,
                    content: NotificationContent(title: "t", body: "b", data: [:], badge: 1, sound: true, threadID: "x"), eventAt: Date(),
                    suppressedReason: nil)
            ]
            // Each write may lease one new delivery to "fan-out-worker"; only the first creates any.
            let claim = DeliveryQueue.FanOutClaim(worker: "fan-out-worker", lease: .seconds(1), room: 1, paused: [])
            var claimed: [Int] = []
            for _ in 0..<3 {
                let written = try await harness.store.pool.withTransaction(setup: Store.tenantScope(tenant)) { connection in
                    try await DeliveryQueue.write(
                        drafts, events: [drafts[0].eventID], tenant: tenant, deadline: .seconds(60), claim: claim, on: connection)
                }
                claimed.append(written.claimed.count)
            }
            #expect(claimed == [1, 0, 0])
            #expect(try await harness.count("SELECT count(*) FROM notifications") == 1)
            #expect(try await harness.count("SELECT count(*) FROM deliveries") == 2)
            // Leased to the worker in one row; the deliveries written once, as queued.
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'queued' AND attempts = 0") == 2)
            #expect(
                try await harness.count(
                    "SELECT count(*) FROM delivery_leases l, unnest(l.deliveries, l.attempts) m(id, a) WHERE l.worker = 'fan-out-worker' AND m.a = 0"
                ) == 1)
            // The dispatcher finds the event done and adds nothing.
            let counters = try await harness.drain()
            #expect(counters.eventsFannedOut == 0)
            #expect(try await harness.count("SELECT count(*) FROM deliveries") == 2)
            // The lease of the worker that never sent its delivery expired and it went out anyway.
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'sent'") == 2)
        }
    }

    func eventID(_ harness: DispatchHarness, _ activity: UUID) async throws -> UUID {
        try await harness.store.pool.query("SELECT id FROM outbox WHERE activity_id = \(activity)").single().decode(UUID.self, at: 0)
    }

    /// One tenant's burst does not hold back another tenant's single notification by more
    /// than a batch.
    @Test func claimsAreFairAcrossTenants() async throws {
        try await DispatchHarness.with { harness in
            try await harness.registerMany("chidi@acme.test", count: 5_000, prefix: "burst-")
            _ = try await harness.assign()
            let other = try await harness.store.createTenant(slug: "globex", name: "Globex")
            try await harness.store.withTenant(other) { session in
                _ = try await session.createTeam(slug: "ops", name: "Ops")
                _ = try await session.addPerson(email: "boss@globex.test", name: "Boss")
                _ = try await session.addPerson(email: "solo@globex.test", name: "Solo")
                _ = try await session.setMembership(team: "ops", email: "boss@globex.test", role: .manager)
                _ = try await session.setMembership(team: "ops", email: "solo@globex.test", role: .member)
                _ = try await session.registerDevice(email: "solo@globex.test", token: "solo-phone", app: .member, platform: .ios, provider: .fcm)
            }
            try await harness.withDispatcher { dispatcher in
                // Fan out the burst first, so its 5,000 deliveries are older than Globex's one.
                #expect(try await dispatcher.fanOutOnce() == (1, 5_000))
                try await harness.store.withTenant(other) {
                    _ = try await $0.assignActivity(
                        actor: "boss@globex.test", team: "ops", assignee: "solo@globex.test", name: "One",
                        deadline: try Input.date(TestDates.deadline))
                }
                #expect(try await dispatcher.fanOutOnce() == (1, 1))
                try await dispatcher.run(.drain(horizon: .zero))
            }
            // Everything went; now check the order in which it was claimed.
            let firstGlobexAttempt = try await harness.count(
                """
                SELECT count(*) FROM delivery_attempt_history a
                WHERE a.started_at < (SELECT min(b.started_at) FROM delivery_attempt_history b
                                      JOIN tenants t ON t.id = b.tenant_id WHERE t.slug = 'globex')
                """)
            let batch = Dispatcher.Configuration().claimBatch
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'sent'") == 5_001)
            // Globex's delivery went out within the first batch of claims after its event
            // (the burst may have had a full batch in flight already, plus one more claim).
            #expect(firstGlobexAttempt <= 2 * batch, "Globex waited behind \(firstGlobexAttempt) attempts")
        }
    }

    /// The claim statement on its own: two tenants with due work split a batch.
    @Test func aClaimSharesTheBatchBetweenTenants() async throws {
        try await DispatchHarness.with { harness in
            try await harness.registerMany("chidi@acme.test", count: 1_000, prefix: "burst-")
            _ = try await harness.assign()
            let other = try await harness.store.createTenant(slug: "globex", name: "Globex")
            try await harness.store.withTenant(other) { session in
                _ = try await session.createTeam(slug: "ops", name: "Ops")
                _ = try await session.addPerson(email: "boss@globex.test", name: "Boss")
                _ = try await session.addPerson(email: "solo@globex.test", name: "Solo")
                _ = try await session.setMembership(team: "ops", email: "boss@globex.test", role: .manager)
                _ = try await session.setMembership(team: "ops", email: "solo@globex.test", role: .member)
                _ = try await session.registerDevice(email: "solo@globex.test", token: "solo-phone", app: .member, platform: .ios, provider: .fcm)
                _ = try await session.assignActivity(
                    actor: "boss@globex.test", team: "ops", assignee: "solo@globex.test", name: "One", deadline: try Input.date(TestDates.deadline))
            }
            try await harness.withDispatcher { dispatcher in
                #expect(try await dispatcher.fanOutOnce() == (2, 1_001))
                let claimed = try await dispatcher.queue.claimDeliveries(limit: 100)
                #expect(claimed.count == 100)
                #expect(claimed.contains { $0.tenantID == other.id })
            }
        }
    }

    /// An acknowledgement from a worker whose lease expired and passed on does not count.
    @Test func aLateAcknowledgementDoesNotCount() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone-0001", app: .member)
            _ = try await harness.assign()
            _ = try await harness.withDispatcher { try await $0.fanOutOnce() }
            let slow = Dispatcher.Configuration(worker: "slow", lease: .seconds(1))
            let fast = Dispatcher.Configuration(worker: "fast", lease: .seconds(30))
            try await harness.withDispatcher(slow) { slowDispatcher in
                let mine = try await slowDispatcher.queue.claimDeliveries(limit: 10)
                #expect(mine.count == 1)
                try await Task.sleep(for: .milliseconds(1_200))
                try await harness.withDispatcher(fast) { fastDispatcher in
                    #expect(try await fastDispatcher.queue.reclaimExpiredLeases() == 1)
                    let theirs = try await fastDispatcher.queue.claimDeliveries(limit: 10)
                    #expect(theirs.map(\.id) == mine.map(\.id))
                    #expect(try await slowDispatcher.queue.acknowledge(mine.map(Self.sent)).isEmpty)
                    #expect(try await fastDispatcher.queue.acknowledge(theirs.map(Self.sent)) == Set(theirs.map(\.id)))
                }
            }
            #expect(try await harness.count("SELECT count(*) FROM delivery_attempt_history WHERE worker = 'slow' AND NOT counted") == 1)
            #expect(try await harness.count("SELECT count(*) FROM delivery_attempt_history WHERE worker = 'fast' AND counted") == 1)
        }
    }

    /// The acknowledgement of `delivery` sent (the provider's 200), as its claim's worker writes it.
    static func sent(_ delivery: ClaimedDelivery) -> Acknowledgement {
        let now = Date()
        return Acknowledgement(
            tenantID: delivery.tenantID, deliveryID: delivery.id, notificationID: delivery.notificationID,
            deviceID: delivery.deviceID, provider: delivery.provider, attempt: delivery.attempt, leaseID: delivery.leaseID,
            status: .sent, outcome: .delivered, nextAttemptAt: nil, httpStatus: 200, messageID: "m", error: nil,
            startedAt: now, finishedAt: now)
    }

    /// A worker that stalled past its lease and claimed the delivery again: the answer to its
    /// first send does not count (the second is in flight under the new lease), the second's does.
    @Test func anAnswerUnderAnEarlierLeaseOfTheSameWorkerDoesNotCount() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone-0001", app: .member)
            _ = try await harness.assign()
            _ = try await harness.withDispatcher { try await $0.fanOutOnce() }
            try await harness.withDispatcher(Dispatcher.Configuration(worker: "stalled", lease: .seconds(1))) { dispatcher in
                let first = try await dispatcher.queue.claimDeliveries(limit: 10)
                #expect(first.count == 1)
                // Until the lease has run out and the delivery is back in the queue.
                while try await dispatcher.queue.reclaimExpiredLeases() == 0 { try await Task.sleep(for: .milliseconds(100)) }
                let second = try await dispatcher.queue.claimDeliveries(limit: 10)
                #expect(second.map(\.id) == first.map(\.id) && second.map(\.attempt) == first.map { $0.attempt + 1 })
                #expect(try await dispatcher.queue.acknowledge(first.map(Self.sent)).isEmpty)
                #expect(try await harness.count("SELECT count(*) FROM delivery_leases WHERE worker = 'stalled'") == 1)
                #expect(try await dispatcher.queue.acknowledge(second.map(Self.sent)) == Set(second.map(\.id)))
            }
            #expect(try await harness.count("SELECT count(*) FROM delivery_attempt_history WHERE worker = 'stalled' AND NOT counted") == 1)
            #expect(try await harness.count("SELECT count(*) FROM delivery_attempt_history WHERE worker = 'stalled' AND counted") == 1)
        }
    }

    /// A provider whose configuration is wrong pauses (on this worker); its work stays queued,
    /// not charged an attempt; stats says so.
    @Test func aConfigurationErrorPausesTheProviderAndKeepsTheWork() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone-0001", app: .member)
            try await harness.register(
                "chidi@acme.test", token: "c41d10000000000000000000000000000000000000000000000000000000f002", app: .member, platform: .ios,
                provider: .apns)
            _ = try await harness.assign()
            let unconfigured = ProviderGateway.fromEnvironment([:], http: harness.gateway.http)
            let counters = try await harness.withDispatcher(gateway: unconfigured) { dispatcher in
                try await dispatcher.run(.drain(horizon: .zero))
                return dispatcher.counters
            }
            #expect(counters.sent == 0 && counters.pausedForConfiguration == 2)
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'queued'") == 2)
            let stats = try await harness.store.dispatchStats(since: nil, tenant: nil)
            #expect(Set(stats.pausedProviders.map(\.provider)) == ["fcm", "apns"])
            #expect(stats.pausedProviders.first { $0.provider == "fcm" }?.reason.contains("GOOGLE_APPLICATION_CREDENTIALS") == true)
            // Due at once for a worker configured right; this one does not claim them.
            #expect(stats.queue["due"] == 2)
            #expect(try await harness.count("SELECT max(attempts) FROM deliveries") == 0)
            #expect(await harness.emulator.messages().isEmpty)
        }
    }

    @Test func historyIsRoleAware() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone-0001", app: .member)
            try await harness.register("alice@acme.test", token: "alice-phone-0001", app: .manager)
            let activity = try await harness.assign()
            // Sent before Chidi starts it (an event still unsent when he does would be superseded).
            _ = try await harness.drain()
            try await harness.act(.start, activity.id, by: "chidi@acme.test")
            _ = try await harness.assign(to: "dana@acme.test")
            _ = try await harness.drain()
            #expect(
                Set(try await harness.history(as: "root@acme.test").map(\.recipient.email)) == [
                    "chidi@acme.test", "alice@acme.test", "dana@acme.test"
                ])
            #expect(try await harness.history(as: "root@acme.test").count == 3)
            #expect(try await harness.history(as: "alice@acme.test").count == 3)
            #expect(try await harness.history(as: "chidi@acme.test").map(\.event) == ["activity.assigned"])
            #expect(try await harness.history(as: "dana@acme.test").map(\.status) == ["no_device"])
            #expect(try await harness.history(as: "erin@acme.test").isEmpty)
            // A member cannot open someone else's notification.
            let alices = try #require(try await harness.history(as: "alice@acme.test", .init(recipient: "alice@acme.test")).first)
            await #expect(throws: StoreError.self) {
                try await harness.store.withTenant(harness.tenant) { try await $0.historyDetail(viewer: "chidi@acme.test", id: alices.id) }
            }
            // Filters.
            #expect(try await harness.history(.init(status: "sent")).count == 2)
            #expect(try await harness.history(.init(activity: activity.id.uuidString)).count == 2)
            #expect(try await harness.history(.init(since: Date().addingTimeInterval(3600))).isEmpty)
            await #expect(throws: InputError.self) { try await harness.history(.init(status: "exploded")) }
        }
    }
}
