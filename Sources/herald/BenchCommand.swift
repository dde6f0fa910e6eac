import ArgumentParser
import Foundation
import HeraldCore
import HeraldDispatch
import HeraldEmulator
import HeraldHTTP
import HeraldPostgres
import HeraldPush
import HeraldStore
import HeraldTemplates
import Logging

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Herald against the emulator: burn-down, latency, fan-out, transitions, tenant deletion.",
        discussion: """
            Starts what it needs: the database (HERALD_DATABASE_URL or the embedded cluster) and an in-process \
            emulator, unless GOOGLE_APPLICATION_CREDENTIALS and HERALD_FCM_ENDPOINT point at a running one. Each run \
            works in fresh tenants named bench-…, removed afterwards (--keep leaves them). Build with \
            `swift build -c release` first: a debug build is several times slower.
            """,
        subcommands: [BurnDown.self, Latency.self, FanOut.self, Transitions.self, TenantDelete.self])

    struct Common: ParsableArguments {
        @Option(help: "Dispatchers (workers) in this process.") var workers = 1
        @Option(help: "Sends in flight per worker.") var concurrency = 512
        @Option(help: "Deliveries claimed per round trip.") var batch = 512
        @Flag(help: "Leave the bench tenants in the database.") var keep = false
        @OptionGroup var options: GlobalOptions

        func validate() throws {
            guard (1...16).contains(workers), (1...10_000).contains(concurrency), (1...5_000).contains(batch) else {
                throw ValidationError("--workers 1-16, --concurrency 1-10000, --batch 1-5000")
            }
        }
    }

    struct BurnDown: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "burn-down", abstract: "Queue N deliveries across tenants, then time until every outcome is recorded.")
        @Option(help: "Deliveries.") var deliveries = 200_000
        @Option(help: "Tenants they are spread over.") var tenants = 4
        @Option(name: .customLong("devices-per-person"), help: "Devices per recipient.") var devicesPerPerson = 100
        @OptionGroup var common: Common

        func run() async throws {
            guard deliveries >= tenants * devicesPerPerson, tenants >= 1, devicesPerPerson >= 1 else {
                throw ValidationError("--deliveries must be at least --tenants × --devices-per-person")
            }
            try await BenchRig.with(common) { rig in
                let people = max(1, deliveries / tenants / devicesPerPerson)
                var setup = ContinuousClock.now
                for index in 0..<tenants {
                    let tenant = try await rig.makeTenant(index: index, members: people, devicesPerMember: devicesPerPerson)
                    try await rig.assignToEveryMember(tenant, count: people)
                }
                let total = tenants * people * devicesPerPerson
                let setupTime = setup.duration(to: .now)
                setup = .now
                // Fan-out first (its own number), then the burn-down proper.
                try await rig.fanOutEverything()
                let fanOut = setup.duration(to: .now)
                let started = ContinuousClock.now
                let counters = try await rig.drain()
                let elapsed = started.duration(to: .now)
                let accepted = await rig.acceptedCount()
                try rig.report(
                    scenario: "burn-down",
                    parameters: ["deliveries": total, "tenants": tenants, "devicesPerPerson": devicesPerPerson],
                    counts: ["sent": counters.sent, "retried": counters.retried, "failed": counters.failed, "acceptedByEmulator": accepted],
                    rates: ["deliveriesPerSecond": Double(counters.sent) / elapsed.timeInterval],
                    durations: ["setup": setupTime.timeInterval, "fanOut": fanOut.timeInterval, "burnDown": elapsed.timeInterval], latency: nil)
            }
        }
    }

    struct Latency: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Commit events at a steady rate; event commit → request at the emulator, p50/p95/p99/max.")
        @Option(help: "Events per second.") var rate = 200
        @Option(help: "Seconds.") var seconds = 30
        @OptionGroup var common: Common

        func run() async throws {
            guard (1...5_000).contains(rate), (1...600).contains(seconds) else { throw ValidationError("--rate 1-5000, --seconds 1-600") }
            try await BenchRig.with(common) { rig in
                let count = rate * seconds
                let tenant = try await rig.makeTenant(index: 0, members: count, devicesPerMember: 1)
                let members = try await rig.memberEmails(tenant)
                let committed = try await rig.withWorkers { () async throws -> [String: Date] in
                    // Let the workers start listening.
                    try await Task.sleep(for: .milliseconds(500))
                    return try await rig.commitAtRate(tenant, members: members, rate: rate, seconds: seconds)
                } until: { await rig.acceptedCount() >= count }
                let received = try await rig.arrivals()
                var latencies: [Double] = []
                for (token, at) in committed {
                    if let arrival = received[token] { latencies.append(arrival.timeIntervalSince(at) * 1000) }
                }
                try rig.report(
                    scenario: "latency", parameters: ["rate": rate, "seconds": seconds],
                    counts: ["events": committed.count, "arrived": latencies.count], rates: [:], durations: [:],
                    latency: BenchRig.percentiles(latencies))
            }
        }
    }

    struct FanOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fan-out", abstract: "One message to a large group: time until every request is sent and every outcome recorded.")
        @Option(help: "People in the group.") var people = 10_000
        @OptionGroup var common: Common

        func run() async throws {
            guard (2...200_000).contains(people) else { throw ValidationError("--people 2-200000") }
            try await BenchRig.with(common) { rig in
                let tenant = try await rig.makeTenant(index: 0, members: people, devicesPerMember: 1)
                let conversation = try await rig.makeGroup(tenant)
                let (firstSent, allSent, allRecorded) = try await rig.withWorkers { () async throws -> (Double, Double, Double) in
                    try await Task.sleep(for: .milliseconds(500))
                    let committedAt = try await rig.sendGroupMessage(tenant, conversation: conversation)
                    while await rig.acceptedCount() < people { try await Task.sleep(for: .milliseconds(5)) }
                    // (A running emulator also remembers earlier runs' messages.)
                    let arrivals = try await rig.arrivals().values.filter { $0 >= committedAt }
                    let first = arrivals.min() ?? Date(), last = arrivals.max() ?? Date()
                    while try await rig.recordedCount() < people { try await Task.sleep(for: .milliseconds(10)) }
                    return (first.timeIntervalSince(committedAt), last.timeIntervalSince(committedAt), Date().timeIntervalSince(committedAt))
                } until: { false }
                try rig.report(
                    scenario: "fan-out", parameters: ["people": people], counts: ["accepted": await rig.acceptedCount()], rates: [:],
                    durations: ["firstRequestSent": firstSent, "allRequestsSent": allSent, "allOutcomesRecorded": allRecorded],
                    latency: nil)
            }
        }
    }

    struct Transitions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Workflow commands per second through the store (assign, start, complete, approve, each with its event).")
        @Option(help: "Seconds.") var seconds = 10
        @Option(help: "Concurrent clients.") var clients = 8
        @OptionGroup var common: Common

        func run() async throws {
            guard (1...600).contains(seconds), (1...256).contains(clients) else { throw ValidationError("--seconds 1-600, --clients 1-256") }
            try await BenchRig.with(common, poolSize: min(clients, 16)) { rig in
                let tenant = try await rig.makeTenant(index: 0, members: clients, devicesPerMember: 0)
                let members = try await rig.memberEmails(tenant)
                let deadline = ContinuousClock.now + .seconds(seconds)
                let started = ContinuousClock.now
                let total = try await withThrowingTaskGroup(of: Int.self) { group in
                    for member in members {
                        group.addTask {
                            var done = 0
                            while ContinuousClock.now < deadline {
                                let activity = try await rig.store.withTenant(tenant) {
                                    try await $0.assignActivity(actor: rig.manager, team: "bench", assignee: member, name: "Bench", deadline: "2030-01-01")
                                }
                                for (action, actor) in [(ActivityAction.start, member), (.complete, member), (.approve, rig.manager)] {
                                    _ = try await rig.store.withTenant(tenant) { try await $0.act(action, on: activity.id.uuidString, actor: actor) }
                                }
                                done += 4
                            }
                            return done
                        }
                    }
                    return try await group.reduce(0, +)
                }
                let elapsed = started.duration(to: .now)
                try rig.report(
                    scenario: "transitions", parameters: ["seconds": seconds, "clients": clients], counts: ["transitions": total],
                    rates: ["transitionsPerSecond": Double(total) / elapsed.timeInterval], durations: ["elapsed": elapsed.timeInterval], latency: nil)
            }
        }
    }

    struct TenantDelete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tenant-delete",
            abstract: "Fill a tenant with N deliveries (one attempt each) and delete it; several rounds in one process.")
        @Option(help: "Deliveries (and attempts) per tenant.") var deliveries = 100_000
        @Option(help: "Tenants filled and deleted one after another, in one process.") var rounds = 5
        @OptionGroup var common: Common

        func run() async throws {
            guard (100...1_000_000).contains(deliveries), (1...50).contains(rounds) else {
                throw ValidationError("--deliveries 100-1000000, --rounds 1-50")
            }
            try await BenchRig.with(common) { rig in
                var times: [String: Double] = [:]
                for round in 1...rounds {
                    let tenant = try await rig.makeDeliveredTenant(index: round, deliveries: deliveries)
                    let started = ContinuousClock.now
                    try await rig.store.deleteTenant(slug: tenant.slug)
                    rig.forget(tenant)
                    times["delete \(round)"] = started.duration(to: .now).timeInterval
                }
                try rig.report(
                    scenario: "tenant-delete", parameters: ["deliveries": deliveries, "rounds": rounds], counts: [:], rates: [:],
                    durations: times, latency: nil)
            }
        }
    }
}
