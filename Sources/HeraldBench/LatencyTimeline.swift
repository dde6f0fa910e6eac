import Foundation
import HeraldStore

/// What happened on the machine, second by second, while the latency scenario ran, and where
/// its slow events fell: a pickup p99 over its target in one run and under it in the next is
/// told apart by what shared the two cores in the seconds that held the slow events.
struct LatencyTimeline: Sendable {
    /// One look at the machine: the host's CPU, this process's and the database server's
    /// (`CPUMeter`), the emulator's, and what the server was doing.
    struct Sample: Sendable {
        let at: Date
        let host: HostCPU?
        let meter: CPUMeter.Sample
        let emulator: Double?
        let server: ServerActivity?
    }

    /// One second of the run (between two samples): its events, and the CPU each part took,
    /// in percent of one core.
    struct Second: Encodable, Sendable {
        let second: Int
        let events: Int
        let slow: Int
        let maxMilliseconds: Double
        let host: Double?
        let steal: Double?
        let herald: Double
        let postgres: Double?
        let emulator: Double?
        /// The host's CPU less Herald's, PostgreSQL's and the emulator's: other processes, the kernel.
        let others: Double?
        let checkpointBuffers: Int64?
        let checkpoints: Int64?
        let walKilobytes: Int64?
        let autovacuum: [String]

        /// Why a slow event in this second may have been slow (empty: nothing seen).
        var suspects: [String] {
            var found: [String] = []
            // A spread checkpoint writes a few buffers every second for minutes: only a burst counts.
            if (checkpointBuffers ?? 0) >= LatencyTimeline.checkpointBurst || (checkpoints ?? 0) > 0 { found.append("checkpoint") }
            if !autovacuum.isEmpty { found.append("autovacuum") }
            if (steal ?? 0) >= 5 { found.append("steal") }
            if (others ?? 0) >= 20 { found.append("others") }
            return found
        }
    }

    /// Buffers a checkpoint writes in one second that count as a burst of writes.
    static let checkpointBurst: Int64 = 100
    /// Events slower than this count as slow (the p99's target).
    static let slowMilliseconds = 5.0

    static func sample(store: Store, meter: CPUMeter, emulator: BenchEmulator) async -> Sample {
        Sample(
            at: Date(), host: HostCPU.sample(), meter: meter.sample(), emulator: await emulator.cpuSeconds(),
            server: try? await store.serverActivity())
    }

    /// The seconds between consecutive `samples`, with the events committed in each.
    /// - Parameter events: each event's commit time and its latency in milliseconds.
    static func seconds(_ samples: [Sample], events: [(committed: Date, milliseconds: Double)]) -> [Second] {
        guard samples.count >= 2 else { return [] }
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        var result: [Second] = []
        for index in 1..<samples.count {
            let (start, end) = (samples[index - 1], samples[index])
            let inside = events.filter { $0.committed >= start.at && $0.committed < end.at }.map(\.milliseconds)
            let wall = max(end.at.timeIntervalSince(start.at), 0.001)
            func percent(_ seconds: Double) -> Double { (seconds / wall * 100 * 10).rounded() / 10 }
            var host: Double?
            var steal: Double?
            if let before = start.host, let after = end.host, after.total > before.total {
                // The host's ticks as a share of all of them, in percent of one core.
                host = ((after.busy - before.busy) / (after.total - before.total) * cores * 100 * 10).rounded() / 10
                steal = ((after.steal - before.steal) / (after.total - before.total) * cores * 100 * 10).rounded() / 10
            }
            let herald = percent(end.meter.process - start.meter.process)
            let postgres = end.meter.server.flatMap { after in start.meter.server.map { percent(after - $0) } }
            let emulator = end.emulator.flatMap { after in start.emulator.map { percent(after - $0) } }
            let others = host.map { max(0, $0 - herald - (postgres ?? 0) - (emulator ?? 0)) }
            result.append(
                Second(
                    second: index, events: inside.count, slow: inside.filter { $0 > slowMilliseconds }.count, maxMilliseconds: inside.max() ?? 0,
                    host: host, steal: steal, herald: herald, postgres: postgres, emulator: emulator, others: others,
                    checkpointBuffers: end.server.flatMap { after in start.server.map { after.checkpointBuffers - $0.checkpointBuffers } },
                    checkpoints: end.server.flatMap { after in start.server.map { after.checkpoints - $0.checkpoints } },
                    walKilobytes: end.server.flatMap { after in start.server.map { (after.walBytes - $0.walBytes) / 1024 } },
                    autovacuum: Array(Set((start.server?.autovacuum ?? []) + (end.server?.autovacuum ?? []))).sorted()))
        }
        return result
    }

    /// Slow events, and how many of them fell in seconds with each suspect.
    static func attribution(_ seconds: [Second]) -> [String: Int] {
        var counts = ["slowEvents": 0, "slowUnexplained": 0]
        for second in seconds where second.slow > 0 {
            counts["slowEvents", default: 0] += second.slow
            let suspects = second.suspects
            if suspects.isEmpty { counts["slowUnexplained", default: 0] += second.slow }
            for suspect in suspects { counts["slowWith\(suspect.prefix(1).uppercased() + suspect.dropFirst())", default: 0] += second.slow }
        }
        return counts
    }
}
