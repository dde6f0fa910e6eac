import CoreMetrics
import Foundation
import HeraldCore
import HeraldStore

/// What a dispatcher reports through swift-metrics; the process chooses where it goes
/// (`herald worker --metrics` serves it as Prometheus text). Labels take few values: no
/// tenant, no token, no id. Every handle is made once, so recording is a lookup-free add.
struct DispatchMetrics: Sendable {
    /// How an acknowledged attempt left its delivery, as `herald_deliveries_total`'s `outcome`:
    /// the delivery's status, with `queued` told apart as `retry` or `held_back`.
    static let outcomes = ["sent", "retry", "held_back", "dead_token", "failed", "expired", "cancelled", "unanswered"]
    /// `herald_queue_depth`'s states.
    typealias QueueState = DeliveryQueue.State

    private let deliveries: [PushProvider: [String: Counter]]
    private let sendDuration: [PushProvider: CoreMetrics.Timer]
    private let eventToSent: CoreMetrics.Timer
    private let deliveriesWritten: Counter
    private let eventsFannedOut: Counter
    private let fanOutFailures: Counter
    private let eventsPassedOver: Counter
    private let timersFired: Counter
    private let paused: [PushProvider: Gauge]
    private let queueDepth: [QueueState: Gauge]

    init() {
        var deliveries: [PushProvider: [String: Counter]] = [:]
        var sendDuration: [PushProvider: CoreMetrics.Timer] = [:]
        var paused: [PushProvider: Gauge] = [:]
        for provider in PushProvider.allCases {
            var byOutcome: [String: Counter] = [:]
            for outcome in Self.outcomes {
                byOutcome[outcome] = Counter(
                    label: "herald_deliveries_total", dimensions: [("provider", provider.rawValue), ("outcome", outcome)])
            }
            deliveries[provider] = byOutcome
            sendDuration[provider] = CoreMetrics.Timer(
                label: "herald_send_duration_seconds", dimensions: [("provider", provider.rawValue)], preferredDisplayUnit: .seconds)
            paused[provider] = Gauge(label: "herald_provider_paused", dimensions: [("provider", provider.rawValue)])
        }
        self.deliveries = deliveries
        self.sendDuration = sendDuration
        self.paused = paused
        eventToSent = CoreMetrics.Timer(label: "herald_event_to_sent_seconds", preferredDisplayUnit: .seconds)
        deliveriesWritten = Counter(label: "herald_fanout_deliveries_total")
        eventsFannedOut = Counter(label: "herald_fanout_events_total")
        fanOutFailures = Counter(label: "herald_fanout_failures_total")
        eventsPassedOver = Counter(label: "herald_fanout_passed_over_total")
        timersFired = Counter(label: "herald_timers_fired_total")
        queueDepth = Dictionary(
            uniqueKeysWithValues: QueueState.allCases.map {
                ($0, Gauge(label: "herald_queue_depth", dimensions: [("state", $0.rawValue)]))
            })
    }

    /// Attempts whose acknowledgement counted (the lease still held): what history now says.
    func acknowledged(_ acknowledgement: Acknowledgement) {
        let outcome: String
        switch acknowledgement.status {
        case .queued: outcome = acknowledgement.spent ? "retry" : "held_back"
        case .sending: return
        default: outcome = acknowledgement.status.rawValue
        }
        deliveries[acknowledgement.provider]?[outcome]?.increment()
    }

    /// A provider answered a send (whatever it said) after `duration`.
    func answered(_ provider: PushProvider, took duration: Duration) {
        sendDuration[provider]?.recordNanoseconds(Int64(duration.timeInterval * 1e9))
    }

    /// A provider accepted a notification of an event that happened at `eventAt`.
    func sent(eventAt: Date, now: Date) {
        eventToSent.recordNanoseconds(Int64(max(0, now.timeIntervalSince(eventAt)) * 1e9))
    }

    func fannedOut(events: Int, deliveries: Int) {
        if events > 0 { eventsFannedOut.increment(by: events) }
        if deliveries > 0 { deliveriesWritten.increment(by: deliveries) }
    }

    /// Failures of events' own fan-out counted against them, and events passed over.
    func fanOutFailed(counted: Int, passedOver: Int) {
        if counted > 0 { fanOutFailures.increment(by: counted) }
        if passedOver > 0 { eventsPassedOver.increment(by: passedOver) }
    }

    func firedTimers(_ count: Int) {
        if count > 0 { timersFired.increment(by: count) }
    }

    func providers(heldBack: [PushProvider]) {
        for (provider, gauge) in paused { gauge.record(heldBack.contains(provider) ? 1 : 0) }
    }

    func queue(_ depth: [QueueState: Int]) {
        for (state, gauge) in queueDepth { gauge.record(depth[state] ?? 0) }
    }
}
