import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import Hummingbird

extension Console {
    /// History (the filters of §7, newest first, a page of 50, refreshing itself while a
    /// row is pending) and one notification with its payload, deliveries and attempts.
    func addHistory(to console: RouterGroup<APIContext>) {
        console.get("history") { request, _ in
            await page {
                let session = try await requireSession(request)
                let query = request.uri.queryParameters
                func filter(_ name: String) -> String? { query.get(name).flatMap { $0.isEmpty ? nil : $0 } }
                let cursor = try filter("cursor").map { text in
                    guard let cursor = PageCursor(token: text) else { throw InputError("the page link is not one this console gave") }
                    return cursor
                }
                let since = try filter("since").map { Date().addingTimeInterval(-(try Input.duration($0, field: "since")).timeInterval) }
                let limit = 50
                let historyFilter = HistoryFilter(
                    recipient: filter("user"), activity: filter("activity"), conversation: filter("conversation"), event: filter("event"),
                    status: filter("status"), since: since, limit: limit + 1, after: cursor, digest: filter("digest"))
                let entries = try await store.withTenant(session.authentication.tenant) {
                    try await $0.history(viewer: session.authentication.person, filter: historyFilter)
                }
                let shown = Array(entries.prefix(limit))
                var values: [String: Any] = [
                    "pageTitle": "History",
                    "filters": [
                        "user": filter("user") ?? "", "event": filter("event") ?? "", "since": filter("since") ?? "",
                        "activity": filter("activity") ?? "", "conversation": filter("conversation") ?? "", "digest": filter("digest") ?? ""
                    ],
                    "statuses": HistoryFilter.statuses.map { ["value": $0, "selected": $0 == filter("status")] },
                    "entries": shown.map(Self.row),
                    // The first page refreshes from the live channel (a person's session).
                    "live": cursor == nil && session.authentication.person != nil
                ]
                if shown.contains(where: { $0.status == "pending" }) {
                    values["pending"] = true
                    values["refresh"] = 5
                }
                if entries.count > limit, let last = shown.last {
                    var parameters = ["user", "activity", "conversation", "status", "event", "since", "digest"].compactMap { name in
                        filter(name).map { (name, $0) }
                    }
                    parameters.append(("cursor", PageCursor(at: last.createdAt, id: last.id).token))
                    values["next"] = "/console/history?" + parameters.map { "\($0.0)=\(Self.queryEscaped($0.1))" }.joined(separator: "&")
                }
                return html("history", values, session: session)
            }
        }

        console.get("notifications/:id") { request, context in
            await page {
                let session = try await requireSession(request)
                guard let id = UUID(uuidString: try context.parameters.require("id")) else {
                    throw ConsoleRefusal(status: .notFound, heading: "Not found", detail: "Nothing here, or nothing you may see.", session: session)
                }
                let detail: HistoryDetail
                do {
                    detail = try await store.withTenant(session.authentication.tenant) {
                        try await $0.historyDetail(viewer: session.authentication.person, id: id)
                    }
                } catch let error as StoreError where error.code == .notFound {
                    // The same answer for another's notification as for one that does not exist.
                    throw ConsoleRefusal(status: .notFound, heading: "Not found", detail: "Nothing here, or nothing you may see.", session: session)
                }
                var values = Self.row(detail.notification)
                values["pageTitle"] = "\(detail.notification.event) to \(detail.notification.recipient.name)"
                values["data"] = detail.data.sorted { $0.key < $1.key }.map { ["key": $0.key, "value": $0.value] }
                values["badge"] = detail.badge
                values["sound"] = detail.sound ? "on" : "off"
                values["threadID"] = detail.threadID
                values["deliveries"] = detail.deliveries.map(Self.delivery)
                values["engagement"] = Self.engagement(detail)
                return html("notification", values, session: session)
            }
        }
    }

    static func row(_ entry: HistoryEntry) -> [String: Any] {
        var row: [String: Any] = [
            "id": entry.id.lowercasedString, "event": entry.event, "recipientName": entry.recipient.name,
            "recipientEmail": entry.recipient.email, "recipientPath": pathSegment(entry.recipient.email), "app": entry.app.rawValue,
            "title": entry.title, "body": entry.body,
            "status": entry.status, "devices": entry.devices, "devicesSent": entry.devicesSent, "createdAt": shown(entry.createdAt)
        ]
        if let reason = entry.reason { row["reason"] = reason }
        if let activity = entry.activityID { row["activityID"] = activity.lowercasedString }
        // The digest it went into, or (a digest's own push) the one it is.
        if let digest = entry.digestID ?? (entry.event == "digest" ? entry.eventID : nil) { row["digestID"] = digest.lowercasedString }
        return row
    }

    static func delivery(_ delivery: DeliveryRecord) -> [String: Any] {
        var values: [String: Any] = [
            "id": delivery.id.lowercasedString, "platform": delivery.platform, "provider": delivery.provider,
            "tokenPreview": delivery.tokenPreview, "isFID": delivery.address == "fid", "status": delivery.status,
            "deviceState": delivery.deviceState,
            "attemptCount": delivery.attemptCount, "dueAt": shown(delivery.dueAt), "deadlineAt": shown(delivery.deadlineAt),
            "attempts": delivery.attempts.map { attempt in
                [
                    "attempt": attempt.attempt, "startedAt": shown(attempt.startedAt), "duration": "\(attempt.durationMilliseconds) ms",
                    "outcome": attempt.outcome, "httpStatus": attempt.httpStatus.map(String.init) ?? "", "providerError": attempt.providerError ?? "",
                    "worker": attempt.worker
                ] as [String: Any]
            }
        ]
        if let sentAt = delivery.sentAt { values["sentAt"] = shown(sentAt) }
        if let lastError = delivery.lastError { values["lastError"] = lastError }
        return values
    }

    /// What the recipient did with it, in order (docs/inbox.md), each device as history names it.
    static func engagement(_ detail: HistoryDetail) -> [[String: Any]] {
        detail.notification.engagement.timeline.map { step in
            var values: [String: Any] = ["event": step.event.rawValue, "phrase": step.phrase, "at": shown(step.at)]
            if let device = step.device { values["device"] = detail.deviceName(device) }
            return values
        }
    }

    /// `2026-11-23 17:10:05 UTC`.
    static func shown(_ date: Date) -> String {
        date.ISO8601Format().replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
    }

    static func queryEscaped(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~@")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
