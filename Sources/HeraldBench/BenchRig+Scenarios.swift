import Foundation
import HeraldCore
import HeraldStore

/// The scenarios `herald bench` runs. Each works in fresh tenants of its own and returns
/// what it measured; the caller checks the parameters' ranges.
extension BenchRig {
    /// Queues `deliveries` across `tenants`, fans them out (timed on its own), then times
    /// the burn-down until every outcome is recorded.
    public func burnDown(deliveries: Int, tenants: Int, devicesPerPerson: Int) async throws -> BenchReport {
        let people = max(1, deliveries / tenants / devicesPerPerson)
        var setup = ContinuousClock.now
        for index in 0..<tenants {
            let tenant = try await makeTenant(index: index, members: people, devicesPerMember: devicesPerPerson)
            try await assignToEveryMember(tenant, count: people)
        }
        let total = tenants * people * devicesPerPerson
        let setupTime = setup.duration(to: .now)
        setup = .now
        let walBeforeFanOut = await walPosition()
        let beforeFanOut = meter.sample()
        try await fanOutEverything()
        let fanOut = setup.duration(to: .now)
        let walAfterFanOut = await walPosition()
        var cpu = meter.sample().perItem(since: beforeFanOut, items: total, phase: "fan-out", byThread: false)
        try await analyzeQueue()
        let walBeforeDrain = await walPosition()
        let emulatorBefore = await emulator.cpuSeconds()
        let drained = try await drain()
        let emulatorAfter = await emulator.cpuSeconds()
        let walAfterDrain = await walPosition()
        let counters = drained.counters
        let accepted = await acceptedCount()
        cpu.merge(drained.after.perItem(since: drained.before, items: counters.sent, phase: "send+acknowledge")) { $1 }
        if let before = emulatorBefore, let after = emulatorAfter, accepted > 0 {
            cpu["emulator per request"] = (after - before) * 1_000_000 / Double(accepted)
        }
        var rates = ["deliveriesPerSecond": Double(counters.sent) / drained.elapsed.timeInterval]
        // What PostgreSQL's log grew by, a delivery (pg_stat_wal; left out when a reading failed).
        rates["WAL bytes/delivery, fan-out"] = Self.perItem(from: walBeforeFanOut, to: walAfterFanOut, items: total)
        rates["WAL bytes/delivery, send+acknowledge"] = Self.perItem(from: walBeforeDrain, to: walAfterDrain, items: counters.sent)
        return report(
            scenario: "burn-down",
            parameters: ["deliveries": total, "tenants": tenants, "devicesPerPerson": devicesPerPerson],
            counts: [
                "sent": counters.sent, "retried": counters.retried, "unanswered": counters.unanswered, "failed": counters.failed,
                "lateAcknowledgements": counters.lateAcknowledgements, "acceptedByEmulator": accepted
            ],
            rates: rates,
            durations: ["setup": setupTime.timeInterval, "fanOut": fanOut.timeInterval, "burnDown": drained.elapsed.timeInterval],
            cpu: cpu)
    }

    /// Commits `rate` events a second for `seconds` with the workers running; event commit →
    /// request at the emulator, as percentiles; and, second by second, what shared the machine
    /// (`LatencyTimeline`), with the slow events counted by what their seconds held.
    public func latency(rate: Int, seconds: Int) async throws -> BenchReport {
        let count = rate * seconds
        let tenant = try await makeTenant(index: 0, members: count, devicesPerMember: 1)
        let members = try await memberEmails(tenant)
        let sampling = Task {
            var samples: [LatencyTimeline.Sample] = []
            while !Task.isCancelled {
                let sample = await LatencyTimeline.sample(store: store, meter: meter, emulator: emulator)
                // One the cancellation cut short lacks the database's and the emulator's
                // figures (their reads were cancelled): the last sample, taken after, stands
                // in for it.
                if Task.isCancelled { break }
                samples.append(sample)
                try? await Task.sleep(for: .seconds(1))
            }
            return samples
        }
        let committed = try await withWorkers { _ async throws -> [String: Date] in
            // Let the workers start listening.
            try await Task.sleep(for: .milliseconds(500))
            return try await self.commitAtRate(tenant, members: members, rate: rate, seconds: seconds)
        } until: {
            await self.acceptedCount() >= count
        }
        sampling.cancel()
        let samples = await sampling.value + [await LatencyTimeline.sample(store: store, meter: meter, emulator: emulator)]
        let received = try await arrivals()
        var events: [(committed: Date, milliseconds: Double)] = []
        for (token, at) in committed {
            if let arrival = received[token] { events.append((at, arrival.timeIntervalSince(at) * 1000)) }
        }
        let timeline = LatencyTimeline.seconds(samples, events: events)
        var counts = ["events": committed.count, "arrived": events.count]
        counts.merge(LatencyTimeline.attribution(timeline)) { $1 }
        return report(
            scenario: "latency", parameters: ["rate": rate, "seconds": seconds], counts: counts,
            latency: BenchReport.percentiles(events.map(\.milliseconds)), timeline: timeline, samples: events.map(\.milliseconds))
    }

    /// One message to a group of `people`: time from its commit until every delivery is
    /// written and until every one is leased (the workers' counters, looked at every
    /// millisecond), until the first and the last request reach the emulator, and until every
    /// outcome is recorded; and the CPU all that took, per delivery.
    public func fanOut(people: Int) async throws -> BenchReport {
        let tenant = try await makeTenant(index: 0, members: people, devicesPerMember: 1)
        let conversation = try await makeGroup(tenant)
        let (durations, cpu, sends) = try await withWorkers { dispatchers async throws -> ([String: Double], [String: Double], [String: Int]) in
            try await Task.sleep(for: .milliseconds(500))
            // The CPU counted is the workers' from the commit on: not the message's own
            // command, nor the bench reading the emulator's arrivals afterwards.
            let committedAt = try await self.sendGroupMessage(tenant, conversation: conversation)
            let committed = ContinuousClock.now
            let before = self.meter.sample()
            var written: Duration?
            var leased: Duration?
            while leased == nil || written == nil, committed.duration(to: .now) < .seconds(120) {
                let counters = dispatchers.map(\.counters)
                if written == nil, counters.reduce(0, { $0 + $1.deliveriesQueued }) >= people { written = committed.duration(to: .now) }
                if leased == nil, counters.reduce(0, { $0 + $1.deliveriesLeased }) >= people { leased = committed.duration(to: .now) }
                try await Task.sleep(for: .milliseconds(1))
            }
            while await self.acceptedCount() < people { try await Task.sleep(for: .milliseconds(5)) }
            while try await self.recordedCount() < people { try await Task.sleep(for: .milliseconds(10)) }
            let recorded = Date().timeIntervalSince(committedAt)
            let cpu = self.meter.sample().perItem(since: before, items: people, phase: "fan-out+send+acknowledge")
            // As the burn-down counts them: a send retried, or left unanswered while the
            // provider was held back, may have reached the emulator twice.
            let counters = dispatchers.map(\.counters)
            let sends = [
                "sent": counters.reduce(0) { $0 + $1.sent }, "retried": counters.reduce(0) { $0 + $1.retried },
                "unanswered": counters.reduce(0) { $0 + $1.unanswered }
            ]
            // (A running emulator also remembers earlier runs' messages.)
            let arrivals = try await self.arrivals().values.filter { $0 >= committedAt }
            let first = arrivals.min() ?? Date()
            let last = arrivals.max() ?? Date()
            return (
                [
                    "allDeliveriesWritten": written?.timeInterval ?? -1, "allDeliveriesLeased": leased?.timeInterval ?? -1,
                    "firstRequestSent": first.timeIntervalSince(committedAt), "allRequestsSent": last.timeIntervalSince(committedAt),
                    "allOutcomesRecorded": recorded
                ], cpu, sends
            )
        } until: {
            true
        }
        return report(
            scenario: "fan-out", parameters: ["people": people], counts: sends.merging(["accepted": await acceptedCount()]) { $1 },
            durations: durations, cpu: cpu)
    }

    /// Workflow commands a second through the store: `clients` at once, each assigning,
    /// starting, completing and approving activities for `seconds`.
    public func transitions(seconds: Int, clients: Int) async throws -> BenchReport {
        let tenant = try await makeTenant(index: 0, members: clients, devicesPerMember: 0)
        let members = try await memberEmails(tenant)
        let deadline = ContinuousClock.now + .seconds(seconds)
        let started = ContinuousClock.now
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for member in members {
                group.addTask {
                    var done = 0
                    while ContinuousClock.now < deadline {
                        let activity = try await self.store.withTenant(tenant) {
                            try await $0.assignActivity(actor: self.manager, team: "bench", assignee: member, name: "Bench", deadline: Self.deadline)
                        }
                        for (action, actor) in [(ActivityAction.start, member), (.complete, member), (.approve, self.manager)] {
                            _ = try await self.store.withTenant(tenant) { try await $0.act(action, on: activity.id, actor: actor) }
                        }
                        done += 4
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = started.duration(to: .now)
        return report(
            scenario: "transitions", parameters: ["seconds": seconds, "clients": clients], counts: ["transitions": total],
            rates: ["transitionsPerSecond": Double(total) / elapsed.timeInterval], durations: ["elapsed": elapsed.timeInterval])
    }

    /// Fills a tenant with `deliveries` delivered deliveries and deletes it, `rounds` times.
    public func tenantDelete(deliveries: Int, rounds: Int) async throws -> BenchReport {
        var times: [String: Double] = [:]
        for round in 1...rounds {
            let tenant = try await makeDeliveredTenant(index: round, deliveries: deliveries)
            let started = ContinuousClock.now
            try await store.deleteTenant(slug: tenant.slug)
            forget(tenant)
            times["delete \(round)"] = started.duration(to: .now).timeInterval
        }
        return report(scenario: "tenant-delete", parameters: ["deliveries": deliveries, "rounds": rounds], durations: times)
    }

    func report(
        scenario: String, parameters: [String: Int], counts: [String: Int] = [:], rates: [String: Double] = [:],
        durations: [String: Double] = [:], latency: [String: Double]? = nil, cpu: [String: Double] = [:],
        timeline: [LatencyTimeline.Second]? = nil, samples: [Double]? = nil
    ) -> BenchReport {
        BenchReport(
            scenario: scenario, settings: settings, emulatorInProcess: emulator.isInProcess, parameters: parameters, counts: counts,
            rates: rates, durations: durations, latency: latency, cpu: cpu, timeline: timeline, samples: samples)
    }
}
