import CoreMetrics
import Prometheus

/// The process's metrics: swift-metrics bootstrapped, once, onto one Prometheus registry.
/// The libraries record through swift-metrics and never see this; `herald serve` and
/// `herald worker` call `shared` before they make anything that records.
public enum MetricsRegistry {
    /// The registry (bootstrapping swift-metrics onto it the first time it is read).
    public static let shared: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Sends, pool waits and API requests: 1 ms to 10 s.
        factory.defaultDurationHistogramBuckets = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000]
            .map { Duration.microseconds(Int64($0 * 1000)) }
        // Event → sent spans queueing, quiet hours and retries: up to an hour.
        factory.durationHistogramBuckets["herald_event_to_sent_seconds"] =
            [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, 300_000, 3_600_000]
            .map { Duration.milliseconds(Int64($0)) }
        // Prometheus names allow no dots (Hummingbird's series use them).
        factory.nameAndLabelSanitizer = { name, labels in
            (sanitized(name), labels.map { (sanitized($0.0), $0.1) })
        }
        MetricsSystem.bootstrap(factory)
        return registry
    }()

    /// The exposition text of everything recorded so far.
    public static func render() -> String {
        var buffer: [UInt8] = []
        shared.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    static func sanitized(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" ? $0 : "_" })
    }
}
