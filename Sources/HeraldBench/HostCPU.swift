import Foundation

/// The whole machine's CPU time, from the first line of `/proc/stat`, in seconds: what every
/// process and the kernel spent, and what the hypervisor took from this machine (steal).
struct HostCPU: Sendable {
    var busy: Double
    var steal: Double
    var total: Double

    /// Nil where `/proc/stat` cannot be read.
    static func sample() -> HostCPU? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return nil }
        // cpu user nice system idle iowait irq softirq steal …
        let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard ticks.count >= 8 else { return nil }
        let hertz = Double(sysconf(Int32(_SC_CLK_TCK)))
        let busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6]
        return HostCPU(busy: busy / hertz, steal: ticks[7] / hertz, total: ticks[0..<8].reduce(0, +) / hertz)
    }
}
