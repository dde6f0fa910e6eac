import HeraldCore

/// Whether this worker sends to a provider now: the pure decision behind its pauses.
///
/// A provider is held back, by this worker only, in two cases:
/// - its configuration, as this worker has it (credentials, endpoint), is wrong: held back
///   for `configurationPause`, then one probe. Another worker, configured right, is not
///   concerned: a bad key on one machine must not stop the others.
/// - its endpoint does not answer at all (refused, reset, timed out, TLS failing) several
///   times in a row: a circuit opens for `firstOpening`, doubling up to `longestOpening` while
///   the probes keep failing, and closes at the first answer. While it is open the queued
///   deliveries stay queued without spending attempts, and when it closes they are due at
///   once: the backlog drains within seconds of the endpoint's return.
///
/// An endpoint that answers, even with an error (429, 503, 400), is up: those are the
/// delivery's own retries.
struct SendGate {
    struct Settings: Sendable {
        var configurationPause: Duration = .seconds(30)
        /// Transport faults in a row, with no answer between, that open the circuit.
        var faultsToOpen = 3
        var firstOpening: Duration = .milliseconds(500)
        var longestOpening: Duration = .seconds(5)
    }

    /// What to do with a delivery for a provider.
    enum Verdict: Equatable {
        /// Send it.
        case send
        /// Send it: it is the one probe of a held-back provider.
        case probe
        /// Do not send it; it goes back to the queue as it was.
        case holdBack(reason: String)
    }

    /// How a send ended, as far as the gate cares.
    enum Answer: Equatable {
        /// The provider answered (whatever it said about the notification).
        case answered
        /// No answer at all: connection refused or reset, timeout, TLS failure.
        case transportFault(String)
        /// Credentials or configuration refused, or missing.
        case configurationFault(String)
    }

    /// A change worth telling operators (and `herald stats`) about.
    enum Change: Equatable {
        case heldBack(PushProvider, reason: String, for: Duration)
        case resumed(PushProvider)
    }

    private enum Circuit {
        case closed(faultsInARow: Int)
        case open(until: ContinuousClock.Instant, reason: String, opening: Duration, configuration: Bool)
        case probing(reason: String, opening: Duration, configuration: Bool)
    }

    let settings: Settings
    private var circuits: [PushProvider: Circuit] = [:]

    init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Providers whose deliveries this worker should not claim now.
    func heldBack(at now: ContinuousClock.Instant) -> [PushProvider] {
        held(at: now) { _ in true }
    }

    /// Providers held back because this worker's configuration failed (not an endpoint that
    /// is down): their work waits for an operator, not for seconds.
    func pausedForConfiguration(at now: ContinuousClock.Instant) -> [PushProvider] {
        held(at: now) { configuration in configuration }
    }

    /// Providers open (until a moment after `now`) or probing, whose trouble `counts`.
    private func held(at now: ContinuousClock.Instant, counting counts: (_ configuration: Bool) -> Bool) -> [PushProvider] {
        circuits.compactMap { provider, circuit in
            switch circuit {
            case .closed: nil
            case .open(let until, _, _, let configuration): until > now && counts(configuration) ? provider : nil
            case .probing(_, _, let configuration): counts(configuration) ? provider : nil
            }
        }.sorted { $0.rawValue < $1.rawValue }
    }

    mutating func admit(_ provider: PushProvider, at now: ContinuousClock.Instant) -> Verdict {
        switch circuits[provider] ?? .closed(faultsInARow: 0) {
        case .closed:
            return .send
        case .open(let until, let reason, let opening, let configuration):
            guard until <= now else { return .holdBack(reason: reason) }
            circuits[provider] = .probing(reason: reason, opening: opening, configuration: configuration)
            return .probe
        case .probing(let reason, _, _):
            return .holdBack(reason: reason)
        }
    }

    /// Takes in how a send (admitted or probing) ended.
    /// - Returns: the change it made, if any.
    mutating func record(_ answer: Answer, for provider: PushProvider, probe: Bool, at now: ContinuousClock.Instant) -> Change? {
        let circuit = circuits[provider] ?? .closed(faultsInARow: 0)
        switch answer {
        case .answered:
            circuits[provider] = .closed(faultsInARow: 0)
            if case .closed = circuit { return nil }
            return .resumed(provider)
        case .configurationFault(let reason):
            switch circuit {
            case .open:
                // Held back already; a send that left before changes nothing.
                return nil
            case .probing where !probe:
                return nil
            case .closed, .probing:
                return open(provider, reason: reason, opening: settings.configurationPause, configuration: true, at: now)
            }
        case .transportFault(let reason):
            switch circuit {
            case .closed(let faults):
                guard faults + 1 >= settings.faultsToOpen else {
                    circuits[provider] = .closed(faultsInARow: faults + 1)
                    return nil
                }
                return open(
                    provider, reason: "the endpoint does not answer: \(reason)", opening: settings.firstOpening, configuration: false, at: now)
            case .probing(_, let opening, let configuration) where probe:
                // The probe found no endpoint: wait longer next time (after a configuration
                // pause, start from the shortest wait: this is a different trouble).
                let next = configuration ? settings.firstOpening : min(settings.longestOpening, opening * 2)
                return open(provider, reason: "the endpoint does not answer: \(reason)", opening: next, configuration: false, at: now)
            case .open, .probing:
                // A send that left before the circuit opened: it changes nothing.
                return nil
            }
        }
    }

    /// A probe that ended without an answer (the send was cancelled): the next send probes.
    mutating func abandonProbe(_ provider: PushProvider, at now: ContinuousClock.Instant) {
        if case .probing(let reason, let opening, let configuration) = circuits[provider] {
            circuits[provider] = .open(until: now, reason: reason, opening: opening, configuration: configuration)
        }
    }

    /// The provider's configuration was read again: a held-back provider gets its probe now
    /// rather than when its wait ends.
    mutating func probeSoon(_ provider: PushProvider, at now: ContinuousClock.Instant) {
        if case .open(let until, let reason, let opening, let configuration) = circuits[provider], until > now {
            circuits[provider] = .open(until: now, reason: reason, opening: opening, configuration: configuration)
        }
    }

    /// Whether `provider` is held back now (a send that just failed is not charged for it).
    func isHeldBack(_ provider: PushProvider, at now: ContinuousClock.Instant) -> Bool {
        heldBack(at: now).contains(provider)
    }

    private mutating func open(
        _ provider: PushProvider, reason: String, opening: Duration, configuration: Bool, at now: ContinuousClock.Instant
    ) -> Change {
        circuits[provider] = .open(until: now + opening, reason: reason, opening: opening, configuration: configuration)
        return .heldBack(provider, reason: reason, for: opening)
    }
}
