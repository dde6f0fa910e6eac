import HeraldCore
import Testing

@testable import HeraldDispatch

/// The gate's decisions, without a database or a network.
struct SendGateTests {
    let start = ContinuousClock.now
    let settings = SendGate.Settings(
        configurationPause: .seconds(30), faultsToOpen: 3, firstOpening: .milliseconds(500), longestOpening: .seconds(2))

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test func aConfigurationFaultHoldsTheProviderBackThenLetsOneProbeThrough() {
        var gate = SendGate(settings: settings)
        #expect(gate.admit(.fcm, at: at(0)) == .send)
        #expect(
            gate.record(.configurationFault("bad key"), for: .fcm, probe: false, at: at(0)) == .heldBack(.fcm, reason: "bad key", for: .seconds(30)))
        #expect(gate.admit(.fcm, at: at(1_000)) == .holdBack(reason: "bad key"))
        #expect(gate.admit(.apns, at: at(1_000)) == .send, "another provider is not concerned")
        #expect(gate.heldBack(at: at(1_000)) == [.fcm])
        #expect(gate.pausedForConfiguration(at: at(1_000)) == [.fcm])
        // More sends that left before the pause change nothing.
        #expect(gate.record(.configurationFault("bad key"), for: .fcm, probe: false, at: at(1_000)) == nil)
        // After the pause: one probe, the rest wait for it.
        #expect(gate.admit(.fcm, at: at(30_000)) == .probe)
        #expect(gate.admit(.fcm, at: at(30_001)) == .holdBack(reason: "bad key"))
        #expect(gate.heldBack(at: at(30_001)) == [.fcm])
        #expect(gate.record(.answered, for: .fcm, probe: true, at: at(30_100)) == .resumed(.fcm))
        #expect(gate.admit(.fcm, at: at(30_101)) == .send)
        #expect(gate.heldBack(at: at(30_101)).isEmpty)
    }

    @Test func aFailedProbeOfABadConfigurationPausesAgain() {
        var gate = SendGate(settings: settings)
        _ = gate.record(.configurationFault("bad key"), for: .apns, probe: false, at: at(0))
        #expect(gate.admit(.apns, at: at(30_000)) == .probe)
        #expect(
            gate.record(.configurationFault("bad key"), for: .apns, probe: true, at: at(30_050))
                == .heldBack(.apns, reason: "bad key", for: .seconds(30)))
        #expect(gate.admit(.apns, at: at(31_000)) == .holdBack(reason: "bad key"))
    }

    /// A few faults in a row open the circuit; an answer between them starts the count again.
    @Test func transportFaultsInARowOpenTheCircuit() {
        var gate = SendGate(settings: settings)
        #expect(gate.record(.transportFault("refused"), for: .fcm, probe: false, at: at(0)) == nil)
        #expect(gate.record(.transportFault("refused"), for: .fcm, probe: false, at: at(1)) == nil)
        #expect(gate.record(.answered, for: .fcm, probe: false, at: at(2)) == nil)
        #expect(gate.record(.transportFault("refused"), for: .fcm, probe: false, at: at(3)) == nil)
        #expect(gate.record(.transportFault("refused"), for: .fcm, probe: false, at: at(4)) == nil)
        #expect(!gate.isHeldBack(.fcm, at: at(4)))
        #expect(
            gate.record(.transportFault("refused"), for: .fcm, probe: false, at: at(5))
                == .heldBack(.fcm, reason: "the endpoint does not answer: refused", for: .milliseconds(500)))
        #expect(gate.isHeldBack(.fcm, at: at(5)))
        #expect(gate.pausedForConfiguration(at: at(5)).isEmpty, "an outage is not a configuration pause")
        // Sends that were in flight when it opened change nothing.
        #expect(gate.record(.transportFault("refused"), for: .fcm, probe: false, at: at(6)) == nil)
        #expect(gate.admit(.fcm, at: at(400)) == .holdBack(reason: "the endpoint does not answer: refused"))
    }

    /// While probes fail the wait doubles up to the longest; the first answer closes it.
    @Test func failedProbesWaitLongerAndTheFirstAnswerClosesTheCircuit() {
        var gate = SendGate(settings: settings)
        for moment in 0..<3 { _ = gate.record(.transportFault("timeout"), for: .fcm, probe: false, at: at(moment)) }
        var now = 2
        var waits: [Duration] = []
        for _ in 0..<4 {
            now += 10_000
            #expect(gate.admit(.fcm, at: at(now)) == .probe)
            guard case .heldBack(_, _, let wait)? = gate.record(.transportFault("timeout"), for: .fcm, probe: true, at: at(now)) else {
                Issue.record("a failed probe did not hold the provider back again")
                return
            }
            waits.append(wait)
        }
        #expect(waits == [.seconds(1), .seconds(2), .seconds(2), .seconds(2)])
        now += 10_000
        #expect(gate.admit(.fcm, at: at(now)) == .probe)
        #expect(gate.record(.answered, for: .fcm, probe: true, at: at(now)) == .resumed(.fcm))
        #expect(gate.admit(.fcm, at: at(now)) == .send)
        // Closed again: it takes three faults in a row to open it.
        #expect(gate.record(.transportFault("timeout"), for: .fcm, probe: false, at: at(now)) == nil)
    }

    /// An endpoint that answers with an error is up: a 503 or a 400 is the delivery's business.
    @Test func anAnswerFromAHeldBackEndpointClosesItEvenIfNotTheProbe() {
        var gate = SendGate(settings: settings)
        for moment in 0..<3 { _ = gate.record(.transportFault("reset"), for: .apns, probe: false, at: at(moment)) }
        #expect(gate.record(.answered, for: .apns, probe: false, at: at(10)) == .resumed(.apns))
        #expect(gate.admit(.apns, at: at(11)) == .send)
    }
}

extension SendGateTests {
    /// A probe cancelled before any answer leaves the provider held back, with the next send
    /// as its probe (not held back for good); a reload brings the probe forward.
    @Test func anAbandonedProbeIsTakenUpByTheNextSend() {
        var gate = SendGate(settings: settings)
        _ = gate.record(.configurationFault("bad key"), for: .fcm, probe: false, at: at(0))
        gate.probeSoon(.fcm, at: at(100))
        #expect(gate.admit(.fcm, at: at(100)) == .probe, "a reload brings the probe forward")
        gate.abandonProbe(.fcm, at: at(150))
        #expect(gate.admit(.fcm, at: at(151)) == .probe)
    }
}
