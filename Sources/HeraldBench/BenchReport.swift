import Foundation

/// What one bench scenario measured, as `herald bench` prints it (or its JSON).
public struct BenchReport: Encodable, Sendable {
    public let scenario: String
    public let build: String
    public let cores: Int
    public let workers: Int
    public let concurrency: Int
    public let batch: Int
    public let parameters: [String: Int]
    public let counts: [String: Int]
    public let rates: [String: Double]
    public let durationsSeconds: [String: Double]
    public let latencyMilliseconds: [String: Double]?
    /// Every event's latency (the latency scenario's JSON), for pooling runs (benchmarks/pickup).
    public let latencySamplesMilliseconds: [Double]?
    /// CPU time per delivery, in microseconds, by process and phase: "worker …" is this
    /// process (split by thread where it says so), "postgres …" the database server when it
    /// runs on this machine, "emulator per request" an emulator running as its own process.
    public let cpuMicrosecondsPerDelivery: [String: Double]
    /// Of this process: the dispatchers (and the emulator, when it runs in-process).
    public let peakRSSMegabytes: Double
    public let emulatorInProcess: Bool
    /// The latency scenario's seconds: events, slow ones, and what shared the machine.
    let timeline: [LatencyTimeline.Second]?

    init(
        scenario: String, settings: BenchSettings, emulatorInProcess: Bool, parameters: [String: Int], counts: [String: Int],
        rates: [String: Double], durations: [String: Double], latency: [String: Double]?, cpu: [String: Double],
        timeline: [LatencyTimeline.Second]? = nil, samples: [Double]? = nil
    ) {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #if DEBUG
            build = "debug"
        #else
            build = "release"
        #endif
        self.scenario = scenario
        cores = ProcessInfo.processInfo.activeProcessorCount
        workers = settings.workers
        concurrency = settings.concurrency
        batch = settings.batch
        self.parameters = parameters
        self.counts = counts
        self.rates = rates
        durationsSeconds = durations
        latencyMilliseconds = latency
        latencySamplesMilliseconds = samples
        cpuMicrosecondsPerDelivery = cpu
        peakRSSMegabytes = Double(usage.ru_maxrss) / 1024
        self.emulatorInProcess = emulatorInProcess
        self.timeline = timeline
    }

    /// The report as labelled fields, in the order a reader wants them.
    public var fields: [(String, String)] {
        var fields: [(String, String)] = [
            ("scenario", scenario), ("build", build), ("cores", "\(cores)"),
            ("workers", "\(workers) × \(concurrency) in flight, batches of \(batch)")
        ]
        fields += parameters.sorted { $0.key < $1.key }.map { ($0.key, "\($0.value)") }
        fields += counts.sorted { $0.key < $1.key }.map { ($0.key, "\($0.value)") }
        fields += rates.sorted { $0.key < $1.key }.map { ($0.key, String(format: "%.0f", $0.value)) }
        fields += durationsSeconds.sorted { $0.key < $1.key }.map { ($0.key + " (s)", String(format: "%.3f", $0.value)) }
        if let latency = latencyMilliseconds {
            fields += ["p50", "p95", "p99", "max"].compactMap { key in latency[key].map { ("latency \(key) (ms)", String(format: "%.2f", $0)) } }
        }
        fields += cpuMicrosecondsPerDelivery.sorted { $0.key < $1.key }.map { ("CPU µs/delivery, " + $0.key, String(format: "%.1f", $0.value)) }
        if emulatorInProcess && !cpuMicrosecondsPerDelivery.isEmpty {
            fields.append(("CPU note", "the emulator runs in this process: its CPU counts as the worker's"))
        }
        fields.append((emulatorInProcess ? "peak RSS (MB, dispatchers + emulator)" : "peak RSS (MB)", String(format: "%.1f", peakRSSMegabytes)))
        // The seconds that held slow events, and what shared the machine then (the JSON has every second).
        for second in timeline ?? [] where second.slow > 0 {
            fields.append(("second \(second.second)", Self.describe(second)))
        }
        return fields
    }

    /// `3 slow of 200 (max 12.1 ms); CPU % of a core: host 160 (steal 0, others 12), herald 45, …`.
    static func describe(_ second: LatencyTimeline.Second) -> String {
        func figure(_ value: Double?) -> String { value.map { String(format: "%.0f", $0) } ?? "?" }
        var text = "\(second.slow) slow of \(second.events) (max \(String(format: "%.1f", second.maxMilliseconds)) ms); CPU % of a core: "
        text += "host \(figure(second.host)) (steal \(figure(second.steal)), others \(figure(second.others))), herald \(figure(second.herald)), "
        text += "postgres \(figure(second.postgres)), emulator \(figure(second.emulator))"
        if let buffers = second.checkpointBuffers, buffers > 0 || (second.checkpoints ?? 0) > 0 { text += "; checkpoint wrote \(buffers) buffers" }
        if let wal = second.walKilobytes { text += "; WAL \(wal) kB" }
        if !second.autovacuum.isEmpty { text += "; " + second.autovacuum.joined(separator: ", ") }
        return text
    }

    /// p50, p95, p99 and max of `values` (nearest rank).
    public static func percentiles(_ values: [Double]) -> [String: Double] {
        guard !values.isEmpty else { return [:] }
        let sorted = values.sorted()
        func at(_ fraction: Double) -> Double { sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))] }
        return ["p50": at(0.5), "p95": at(0.95), "p99": at(0.99), "max": sorted[sorted.count - 1]]
    }
}
