import CoreMetrics

/// The live channel's metrics (swift-metrics, served on /metrics).
struct LiveMetrics: Sendable {
    let sockets = Meter(label: "herald_live_sockets")
    let resumes = Counter(label: "herald_live_resumes_total")
    let resyncs = Counter(label: "herald_live_resyncs_total")
    let slowClients = Counter(label: "herald_live_slow_client_closes_total")
    let presenceChanges = Counter(label: "herald_live_presence_changes_total")
    /// Subscriptions (subscriber and person) checked again against the access policy.
    let presencePairsChecked = Counter(label: "herald_live_presence_pairs_checked_total")
    private let frames: [String: Counter] = Dictionary(
        uniqueKeysWithValues: [
            "hello", "message", "receipt", "conversation", "activity", "notification", "inbox", "inbox.status", "badge", "presence",
            "typing", "resync", "error", "pong"
        ].map { ($0, Counter(label: "herald_live_frames_total", dimensions: [("type", $0)])) })

    func sent(_ type: String, count: Int = 1) {
        frames[type]?.increment(by: count)
    }
}
