import Foundation

/// The faults a running emulator injects, as `GET|PUT /emulator/faults` show and take them
/// (for chaos runs: a provider that throttles, fails or hangs for a while, then recovers).
struct FaultSettings: Codable, Equatable {
    /// Share (0…1) of sends answered 503.
    var unavailable: Double
    /// Share (0…1) of sends answered 429.
    var throttled: Double
    /// Seconds in `Retry-After` on those answers.
    var retryAfter: Int
    /// Milliseconds every send waits before its answer (30000: a provider that hangs).
    var latencyMs: Int

    init(_ faults: EmulatorConfiguration.Faults) {
        unavailable = faults.unavailableShare
        throttled = faults.throttledShare
        retryAfter = faults.retryAfterSeconds
        let (seconds, attoseconds) = faults.latency.components
        latencyMs = Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    /// Why these settings cannot be used, or nil.
    var refusal: String? {
        guard (0...1).contains(unavailable), (0...1).contains(throttled), unavailable + throttled <= 1 else {
            return "unavailable and throttled are shares between 0 and 1 that add up to at most 1"
        }
        guard (0...3_600).contains(retryAfter), (0...600_000).contains(latencyMs) else {
            return "retryAfter is 0 to 3600 seconds and latencyMs 0 to 600000"
        }
        return nil
    }

    /// `faults` with these settings (the dead-token prefix kept).
    func applied(to faults: EmulatorConfiguration.Faults) -> EmulatorConfiguration.Faults {
        var faults = faults
        faults.unavailableShare = unavailable
        faults.throttledShare = throttled
        faults.retryAfterSeconds = retryAfter
        faults.latency = .milliseconds(latencyMs)
        return faults
    }
}

extension EmulatorResponder {
    /// `PUT /emulator/faults`: a whole `FaultSettings`, in force from the next send on.
    func setFaults(_ body: Data) -> EmulatorAnswer {
        guard let settings = try? JSONDecoder().decode(FaultSettings.self, from: body) else {
            return json(400, Data(#"{"error": "a body of {unavailable, throttled, retryAfter, latencyMs} is expected"}"#.utf8))
        }
        if let refusal = settings.refusal {
            return json(400, Data(#"{"error": "\#(refusal)"}"#.utf8))
        }
        emulator.state.setFaults(settings.applied(to: emulator.state.faults))
        return encoded(settings)
    }
}
