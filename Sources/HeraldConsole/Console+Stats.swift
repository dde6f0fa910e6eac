import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import Hummingbird

extension Console {
    static let periods = ["24h", "7d", "30d"]

    /// For admins (and tenant keys): the tenant's totals, three charts over the period
    /// (volume, success rate, event → sent latency) drawn as SVG on the server, and the
    /// providers a worker holds back.
    func addStats(to console: RouterGroup<APIContext>) {
        console.get("stats") { request, _ in
            await page {
                let session = try await requireSession(request)
                let viewer = AccessPolicy(session.authentication.person)
                let period = request.uri.queryParameters.get("since").flatMap { Self.periods.contains($0) ? $0 : nil } ?? "24h"
                let span = try Input.duration(period, field: "since").timeInterval
                let bucket: Duration = span <= 2 * 86_400 ? .seconds(3_600) : (span <= 14 * 86_400 ? .seconds(6 * 3_600) : .seconds(86_400))
                let now = Date()
                // Slices start on the hour, so the first one is whole.
                let since = Date(timeIntervalSince1970: ((now.timeIntervalSince1970 - span) / 3_600).rounded(.down) * 3_600)
                let tenant = session.authentication.tenant
                let (series, totals, engagement) = try await Self.refusingAsPages(session) {
                    (
                        try await store.deliverySeries(viewer: viewer, tenant: tenant, since: since, bucket: bucket),
                        try await store.tenantStats(viewer: viewer, tenant: tenant, since: since),
                        try await store.engagementStats(viewer: viewer, tenant: tenant, since: since)
                    )
                }
                let mine = totals.tenants.first { $0.tenant == tenant.slug }
                let labels = series.map { Self.sliceLabel($0.start, daily: bucket >= .seconds(86_400)) }

                func chart(_ values: [Double?], maximum: Double? = nil, color: String, caption: String, format: (Double) -> String) -> [String: Any] {
                    var values = BarChart(values: values, labels: labels, maximum: maximum, format: format).values
                    values["color"] = color
                    values["caption"] = caption
                    return values
                }
                let deliveries = mine?.deliveries ?? [:]
                let ended = ["sent", "dead_token", "failed", "expired"].reduce(0) { $0 + (deliveries[$1] ?? 0) }
                return html(
                    "stats",
                    [
                        "pageTitle": "Stats",
                        "periods": Self.periods.map { ["value": $0, "selected": $0 == period] },
                        "slice": bucket >= .seconds(86_400) ? "day" : (bucket > .seconds(3_600) ? "6 hours" : "hour"),
                        "notifications": series.reduce(0) { $0 + $1.notifications },
                        "sent": deliveries["sent"] ?? 0, "ended": ended,
                        "successRate": mine?.successRate.map { Self.percent($0) } ?? "–",
                        "p50": mine?.latency.map { Self.milliseconds($0.p50Milliseconds) } ?? "–",
                        "p95": mine?.latency.map { Self.milliseconds($0.p95Milliseconds) } ?? "–",
                        "p99": mine?.latency.map { Self.milliseconds($0.p99Milliseconds) } ?? "–",
                        "deadTokens": mine?.deadTokens ?? 0,
                        "queue": totals.queue.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: " · "),
                        "volume": chart(series.map { Double($0.notifications) }, color: "#3b5bdb", caption: "notifications per slice") {
                            String(Int($0))
                        },
                        "success": chart(
                            series.map(\.successRate), maximum: 1, color: "#0a7a3d", caption: "success rate per slice", format: Self.percent),
                        "latency": chart(
                            series.map(\.p95Milliseconds), color: "#8a6d00", caption: "p95 event to sent per slice", format: Self.milliseconds),
                        "opens": Self.opens(engagement),
                        "openRate": {
                            var values = BarChart(
                                values: engagement.map(\.openRate), labels: engagement.map(Self.groupName), maximum: 1, format: Self.percent
                            ).values
                            values["color"] = "#7048e8"
                            values["caption"] = "open rate by event, app and priority"
                            return values
                        }(),
                        "pauses": totals.pausedProviders.map {
                            [
                                "provider": $0.provider, "worker": $0.worker, "reason": $0.reason, "since": Self.shown($0.since),
                                "until": Self.shown($0.until)
                            ]
                        }
                    ], session: session)
            }
        }
    }

    /// Each kind of push's open rate and time to open (docs/inbox.md#open-rates), as rows.
    static func opens(_ groups: [EngagementGroup]) -> [[String: Any]] {
        groups.map { group in
            [
                "event": group.event, "app": group.app.rawValue, "priority": group.priority?.rawValue.uppercased() ?? "–", "sent": group.sent,
                "opened": group.opened, "rate": group.openRate.map(percent) ?? "–", "p50": group.p50Milliseconds.map(milliseconds) ?? "–",
                "p90": group.p90Milliseconds.map(milliseconds) ?? "–"
            ]
        }
    }

    /// `activity.assigned · member · P0`.
    static func groupName(_ group: EngagementGroup) -> String {
        [group.event, group.app.rawValue, group.priority?.rawValue.uppercased()].compactMap { $0 }.joined(separator: " · ")
    }

    static func percent(_ value: Double) -> String { String(format: "%.1f %%", value * 100) }
    static func milliseconds(_ value: Double) -> String { value < 1_000 ? String(format: "%.0f ms", value) : String(format: "%.1f s", value / 1_000) }

    /// `11-23 17:00` (UTC), or `11-23` for daily slices.
    static func sliceLabel(_ date: Date, daily: Bool) -> String {
        let text = shown(date)  // 2026-11-23 17:00:00 UTC
        let monthDay = String(text.dropFirst(5).prefix(5))
        return daily ? monthDay : monthDay + " " + String(text.dropFirst(11).prefix(5))
    }
}
