import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore
import HeraldWebhooks

/// `herald webhook …`: the tenant's webhook endpoints (docs/webhooks.md).
struct WebhookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhook", abstract: "Create, list and remove the tenant's webhook endpoints; see their attempts; replay events.",
        subcommands: [Create.self, List.self, Remove.self, RotateSecret.self, Attempts.self, Replay.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register an endpoint; its signing secret (whsec_…) is printed once, alone on the last line.")

        @Option(help: "Where events are posted: https:// (http:// only with HERALD_WEBHOOK_ALLOW_HTTP=1).") var url: String
        @Option(help: "Comma-separated event patterns, e.g. \"activity.*,message.created,notification.failed\" or \"*\".")
        var events: String
        @Option(help: "What it is for.") var description: String?
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let policy = try DestinationPolicy(.webhooks, environment: ProcessInfo.processInfo.environment)
            // Checked, then stored as given (`url` refuses what it would have to rewrite).
            _ = try policy.url(url)
            let filter = try WebhookEventFilter(commaSeparated: events)
            let description = try description.map { try Input.text($0, field: "description") }
            let secret = WebhookSecret.generate()
            let endpoint = try await withTenant(tenant) {
                try await $0.createWebhook(
                    viewer: AccessPolicy(nil), url: url, events: filter.patterns, description: description, secret: secret.text)
            }
            try WebhookOutput.printWithSecret(endpoint, secret: secret, verb: "created", json: options.json)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the endpoints, their state and why one is disabled.")

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let endpoints = try await withTenant(tenant) { try await $0.webhooks(viewer: AccessPolicy(nil)) }
            if options.json { return try printJSON(endpoints) }
            var table = TextTable("ID", "URL", "EVENTS", "STATE", "CREATED")
            for endpoint in endpoints {
                let state = endpoint.disabledReason.map { "disabled: \($0)" } ?? endpoint.state.rawValue
                table.add(endpoint.id.text, endpoint.url, endpoint.events.joined(separator: ","), state, endpoint.createdAt.shortDisplay)
            }
            print(table.render(empty: "no webhook endpoints (herald webhook create)"))
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an endpoint, with its queued events and its attempts.")

        @Argument(help: "The endpoint's id (from herald webhook list).") var id: String
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let id = try Input.id(id, field: "webhook")
            try await withTenant(tenant) { try await $0.removeWebhook(viewer: AccessPolicy(nil), id: id) }
            if options.json { return try printJSON(["removed": id.text]) }
            print("removed webhook endpoint \(id.text)")
        }
    }

    struct RotateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-secret",
            abstract: "Give an endpoint a new secret (printed once); requests carry both signatures for 24 h.")

        @Argument(help: "The endpoint's id.") var id: String
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let id = try Input.id(id, field: "webhook")
            let secret = WebhookSecret.generate()
            let endpoint = try await withTenant(tenant) { try await $0.rotateWebhookSecret(viewer: AccessPolicy(nil), id: id, secret: secret.text) }
            try WebhookOutput.printWithSecret(endpoint, secret: secret, verb: "rotated the secret of", json: options.json)
        }
    }

    struct Attempts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An endpoint's attempts, newest first.")

        @Argument(help: "The endpoint's id.") var id: String
        @Option(help: "How many (1 to 200).") var limit = 50
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let id = try Input.id(id, field: "webhook")
            guard (1...200).contains(limit) else { throw InputError("--limit is from 1 to 200") }
            let page = try await withTenant(tenant) { try await $0.webhookAttempts(viewer: AccessPolicy(nil), id: id, limit: limit) }
            if options.json { return try printJSON(page.items) }
            var table = TextTable("AT", "EVENT", "MESSAGE", "TRY", "STATUS", "MS", "ERROR")
            for attempt in page.items {
                table.add(
                    attempt.at.shortDisplay, attempt.eventType, WebhookDelivery.webhookID(attempt.messageID), "\(attempt.attempt)",
                    attempt.status.map(String.init) ?? "—", "\(attempt.durationMs)", attempt.error ?? "")
            }
            print(table.render(empty: "no attempts yet"))
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send an endpoint's events since a time again, with their original ids (and enable it if it was disabled).")

        @Argument(help: "The endpoint's id.") var id: String
        @Option(help: "How far back: a duration such as 2h or 3d, or an ISO 8601 time.") var since: String
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let id = try Input.id(id, field: "webhook")
            let since = try Input.since(since, now: Date())
            let queued = try await withTenant(tenant) { try await $0.replayWebhook(viewer: AccessPolicy(nil), id: id, since: since) }
            if options.json { return try printJSON(["queued": queued]) }
            print("queued \(queued) event\(queued == 1 ? "" : "s") for \(id.text) again")
        }
    }
}

/// What webhook commands print.
enum WebhookOutput {
    static func printWithSecret(_ endpoint: WebhookEndpointRecord, secret: WebhookSecret, verb: String, json: Bool) throws {
        if json { return try printJSON(WebhookEndpointWithSecret(endpoint: endpoint, secret: secret.text)) }
        print("\(verb) webhook endpoint \(endpoint.id.text) → \(endpoint.url) (\(endpoint.events.joined(separator: ",")))")
        if let until = endpoint.previousSecretUntil { print("the previous secret is still signed with until \(until.shortDisplay)") }
        print("the secret is shown only now; keep it safe:")
        print(secret.text)
    }
}
