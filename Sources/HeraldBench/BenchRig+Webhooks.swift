import Foundation
import HeraldCore
import HeraldRuntime
import HeraldStore
import HeraldWebhooks

extension BenchRig {
    /// The webhooks' sender against one keep-alive receiver (the emulator's `/webhooks/…`,
    /// in its own process unless `--emulator in-process`): a tenant with one endpoint for
    /// `activity.*` gets `events` assignments, committed while no sender runs; then one
    /// worker's sender, as `herald worker` runs it, is started and timed until the receiver
    /// took every message and each is recorded delivered. CPU per event: this process (the
    /// sender: feeder, claims, requests, records), PostgreSQL and the receiver; and the
    /// connections the receiver accepted meanwhile (kept alive: about the endpoint's 10).
    public func webhooks(events: Int) async throws -> BenchReport {
        var setup = ContinuousClock.now
        let tenant = try await makeTenant(index: 0, members: events, devicesPerMember: 0)
        let secret = WebhookSecret.generate()
        _ = try await store.withTenant(tenant) {
            try await $0.createWebhook(
                viewer: AccessPolicy(personID: nil, isAdmin: true), url: "\(receiver)/webhooks/bench-\(run)", events: ["activity.*"],
                description: "herald bench webhooks", secret: secret.text)
        }
        try await assignToEveryMember(tenant, count: events)
        let setupTime = setup.duration(to: .now)
        let receivedBefore = await emulator.webhooks()
        // The receiver is on loopback, over plain HTTP: allowed for this sender only.
        var variables = environment.variables
        variables["HERALD_WEBHOOK_ALLOW_HTTP"] = "1"
        variables["HERALD_WEBHOOK_ALLOW_PRIVATE"] = "1"
        let local = HeraldEnvironment(variables, logger: logger)
        return try await local.withWebhookSender(store: store, worker: "bench-\(run)-webhooks", retention: .seconds(86_400)) { sender in
            setup = .now
            let walBefore = await walPosition()
            let before = meter.sample()
            let receiverBefore = await emulator.cpuSeconds()
            let running = Task { await sender.run() }
            var received = receivedBefore
            var delivered = 0
            let deadline = ContinuousClock.now + .seconds(600)
            // The receiver's count first (no database query while it climbs), then the records.
            while received.received - receivedBefore.received < events, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
                received = await emulator.webhooks()
            }
            while delivered < events, ContinuousClock.now < deadline {
                delivered = try await store.webhookMessages(tenant: tenant.id).delivered
                if delivered < events { try await Task.sleep(for: .milliseconds(20)) }
            }
            let elapsed = setup.duration(to: .now)
            let after = meter.sample()
            let receiverAfter = await emulator.cpuSeconds()
            let walAfter = await walPosition()
            sender.shutdown()
            await running.value
            let total = try await store.webhookMessages(tenant: tenant.id)
            var cpu = after.perItem(since: before, items: events, phase: "per event")
            if let start = receiverBefore, let end = receiverAfter { cpu["receiver per event"] = (end - start) * 1_000_000 / Double(events) }
            return report(
                scenario: "webhooks", parameters: ["events": events],
                counts: [
                    "messages": total.total, "delivered": total.delivered, "received": received.received - receivedBefore.received,
                    "receivedTwice": received.repeated - receivedBefore.repeated,
                    // (The bench's own requests for the counts keep one connection of their own.)
                    "receiverConnections": received.connections - receivedBefore.connections
                ],
                rates: [
                    "eventsPerSecond": Double(delivered) / elapsed.timeInterval,
                    // Sending only: each message leased, settled, its attempt recorded (pg_stat_wal).
                    "WAL bytes/event, sent": Self.perItem(from: walBefore, to: walAfter, items: events)
                ].compactMapValues { $0 },
                durations: ["setup": setupTime.timeInterval, "sent": elapsed.timeInterval], cpu: cpu)
        }
    }
}
