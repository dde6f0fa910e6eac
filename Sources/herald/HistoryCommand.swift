import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "What was sent to whom, what failed, and why.",
        discussion: """
            Role-aware: a tenant admin sees the whole tenant, a manager their teams' notifications and their own, \
            a member only their own. Statuses: \(HistoryFilter.statuses.joined(separator: ", ")).
            """,
        subcommands: [List.self, Show.self, HistoryPruneCommand.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Notifications, newest first (the default).")

        @Option(help: "Only those to this person (email).") var user: String?
        @Option(help: "Only those about this activity.") var activity: String?
        @Option(help: "Only those about this conversation.") var conversation: String?
        @Option(help: "Only this event (activity.assigned, chat.message, …, or digest: the digests' own pushes).") var event: String?
        @Option(help: "Only this digest: what it gathered, and its own push.") var digest: String?
        @Option(help: "Only this status.") var status: String?
        @Option(help: "Only the last DURATION (e.g. 15m, 2h, 7d).") var since: String?
        @Option(help: "At most this many (default 100).") var limit = 100
        @OptionGroup var actor: ActorOptions
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let viewer = try actor.email()
            let since = try since.map { Date().addingTimeInterval(-(try Input.duration($0, field: "since")).timeInterval) }
            let filter = HistoryFilter(
                recipient: user, activity: activity, conversation: conversation, event: event, status: status, since: since, limit: limit,
                digest: digest)
            let entries = try await withTenant(tenant) { try await $0.history(viewer: viewer, filter: filter) }
            if options.json { return try printJSON(entries) }
            print(Self.table(entries))
        }

        static func table(_ entries: [HistoryEntry], now: Date = Date()) -> String {
            var table = TextTable("ID", "WHEN", "EVENT", "TO", "APP", "STATUS", "DEVICES", "MESSAGE", "REASON")
            for entry in entries {
                table.add(
                    entry.id.text, entry.createdAt.shortDisplay + " (" + entry.createdAt.relative(to: now) + ")", entry.event,
                    entry.recipient.email, entry.app.rawValue, entry.status, "\(entry.devicesSent)/\(entry.devices)",
                    Self.clip(entry.title + ": " + entry.body, 60), entry.reason.map { Self.clip($0, 60) } ?? "-")
            }
            return table.render(empty: "no notifications")
        }

        static func clip(_ text: String, _ limit: Int) -> String {
            let flat = text.replacingOccurrences(of: "\n", with: " ")
            return flat.count <= limit ? flat : String(flat.prefix(limit - 1)) + "…"
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "One notification: its words, its payload, and every delivery attempt with its device and answer.")

        @Argument(help: "The notification's id (from herald history).") var id: String
        @OptionGroup var actor: ActorOptions
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let viewer = try actor.email()
            let id = try Input.id(id, field: "notification")
            let detail = try await withTenant(tenant) { try await $0.historyDetail(viewer: viewer, id: id) }
            if options.json { return try printJSON(detail) }
            let entry = detail.notification
            printFields([
                ("notification", entry.id.text), ("event", "\(entry.event) (\(entry.eventID.text))"),
                ("to", "\(entry.recipient.name) <\(entry.recipient.email)> on the \(entry.app.rawValue) app"),
                ("status", entry.status + (entry.reason.map { " — \($0)" } ?? "")),
                ("event at", entry.eventAt.shortDisplay), ("sent at", entry.sentAt?.shortDisplay ?? "-"),
                (
                    "engagement",
                    detail.notification.engagement.timeline.isEmpty ? "none reported" : String(WhyCommand.engagement(detail).dropFirst(3))
                ),
                ("title", entry.title), ("body", entry.body), ("badge", "\(detail.badge)"),
                ("sound", detail.sound ? "default" : "none (muted)"), ("thread", detail.threadID),
                ("image", detail.imageURL ?? "-"),
                ("data", detail.data.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
            ])
            if let live = detail.liveActivity {
                let state = live.contentState
                printFields([
                    ("live activity", "\(live.event.rawValue), priority \(live.priority)"),
                    (
                        "content state",
                        "\(state.status) · \(state.assignee) · deadline \(state.deadline)"
                            + (state.waitingSince.map { " · waiting since \(Date(timeIntervalSince1970: Double($0)).shortDisplay)" } ?? "")
                    ),
                    (
                        "dates",
                        "timestamp \(Date(timeIntervalSince1970: Double(live.timestamp)).shortDisplay)"
                            + (live.staleDate.map { " · stale \(Date(timeIntervalSince1970: Double($0)).shortDisplay)" } ?? "")
                            + (live.dismissalDate.map { " · dismissed \(Date(timeIntervalSince1970: Double($0)).shortDisplay)" } ?? "")
                    )
                ])
            }
            print("")
            guard !detail.deliveries.isEmpty else {
                print("no deliveries")
                return
            }
            var table = TextTable("DEVICE", "PLATFORM", "PROVIDER", "DEVICE STATE", "#", "STARTED", "MS", "OUTCOME", "HTTP", "MESSAGE ID", "ERROR")
            for delivery in detail.deliveries {
                let device = (delivery.address == "fid" ? "fid " : "") + delivery.tokenPreview
                if delivery.attempts.isEmpty {
                    table.add(device, delivery.platform, delivery.provider, delivery.deviceState, "-", "-", "-", delivery.status, "-", "-", "-")
                }
                for attempt in delivery.attempts {
                    table.add(
                        device, delivery.platform, delivery.provider, delivery.deviceState, "\(attempt.attempt)",
                        attempt.startedAt.shortDisplay, "\(attempt.durationMilliseconds)",
                        attempt.outcome + (attempt.counted ? "" : " (late)"), attempt.httpStatus.map(String.init) ?? "-",
                        attempt.messageID.map { List.clip($0, 40) } ?? "-", attempt.providerError.map { List.clip($0, 60) } ?? "-")
                }
            }
            print(table.render(empty: ""))
            for delivery in detail.deliveries where delivery.status == "queued" || delivery.status == "sending" {
                print("\(delivery.tokenPreview): \(delivery.status), next try \(delivery.dueAt.shortDisplay)")
            }
        }
    }
}

struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Counts by status and event, success rate, latency and dead tokens, per tenant; paused providers.")

    @Option(help: "Only the last DURATION (e.g. 15m, 2h, 7d; default: all time).") var since: String?
    @Option(help: ArgumentHelp("Only this tenant (default: all).", valueName: "slug")) var tenant: String?
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let since = try since.map { Date().addingTimeInterval(-(try Input.duration($0, field: "since")).timeInterval) }
        let stats = try await withStore { try await $0.dispatchStats(since: since, tenant: tenant) }
        if options.json { return try printJSON(stats) }
        for pause in stats.pausedProviders {
            print(
                "PAUSED  \(pause.provider) on worker \(pause.worker): \(pause.reason) (since \(pause.since.shortDisplay), next try \(pause.until.shortDisplay))"
            )
        }
        printFields([
            ("queue", "due \(stats.queue["due"] ?? 0) · waiting to retry \(stats.queue["retrying"] ?? 0) · sending \(stats.queue["sending"] ?? 0)")
        ])
        for tenant in stats.tenants {
            print("")
            print("tenant \(tenant.tenant)")
            var table = TextTable("EVENT", "STATUS", "COUNT")
            for (event, statuses) in tenant.notifications.sorted(by: { $0.key < $1.key }) {
                for (status, count) in statuses.sorted(by: { $0.key < $1.key }) {
                    table.add(event, status, "\(count)")
                }
            }
            print(table.render(empty: "no notifications"))
            let deliveries = tenant.deliveries.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: " · ")
            var fields = [("deliveries", deliveries.isEmpty ? "none" : deliveries)]
            fields.append(("success rate", tenant.successRate.map { String(format: "%.1f%%", $0 * 100) } ?? "-"))
            if let latency = tenant.latency {
                fields.append(
                    (
                        "event → sent",
                        String(
                            format: "p50 %.0f ms · p95 %.0f ms · p99 %.0f ms · max %.0f ms", latency.p50Milliseconds, latency.p95Milliseconds,
                            latency.p99Milliseconds, latency.maxMilliseconds)
                    ))
            }
            fields.append(("dead tokens", "\(tenant.deadTokens)"))
            printFields(fields)
        }
    }
}
