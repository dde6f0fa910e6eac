import CoreMetrics
import HeraldCore

/// What people did with their notifications (docs/inbox.md), counted as it is recorded:
/// `herald_notification_engagement_total{event}` (swift-metrics, served on /metrics).
enum EngagementMetrics {
    private static let counters = Dictionary(
        uniqueKeysWithValues: InboxEngagement.Event.allCases.map {
            ($0, Counter(label: "herald_notification_engagement_total", dimensions: [("event", $0.rawValue)]))
        })

    static func count(_ change: InboxStatusChange) {
        for item in change.happened {
            for event in item.events { counters[event]?.increment() }
        }
    }
}
