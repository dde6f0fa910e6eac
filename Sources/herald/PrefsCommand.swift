import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore

struct PrefsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefs", abstract: "What a person wants pushed, and their quiet hours.",
        discussion: """
            Each event is pushed immediately, gathered into the person's digest, or not at all, per app, as the person \
            or (--tenant-default, admins) the tenant for everyone who set nothing chose; a chat can be set per \
            conversation. P0 activity events are pushed at once whatever is set, and a tenant's digest leaves \
            immediate what asks the person to act. In quiet hours (on the person's own clock) a non-P0 push waits \
            until they end; P0 breaks through.
            """,
        subcommands: [Show.self, Set.self, ChannelCommand.self, DigestWindowCommand.self, QuietHoursCommand.self])

    static func show(_ summary: PreferenceSummary) {
        var table = summary.person == nil ? TextTable("EVENT", "APP", "PUSH", "SET BY") : TextTable("EVENT", "APP", "PUSH", "SET BY", "CHANNEL")
        for entry in summary.entries {
            var row = [entry.event.rawValue, entry.app.rawValue, entry.mode.rawValue, entry.origin.rawValue]
            if summary.person != nil { row.append(entry.channel?.rawValue ?? NotificationChannel.push.rawValue) }
            table.add(row)
        }
        print(table.render(empty: ""))
        for conversation in summary.conversations ?? [] {
            print(
                "conversation \(conversation.name.map { TerminalText.escaped($0, .singleLine) } ?? conversation.conversationId.lowercasedString): \(conversation.mode.rawValue)"
            )
        }
        if let window = summary.digestWindow { print("digest window: \(window)" + (summary.digestChannel == "email" ? ", by email" : "")) }
        if let person = summary.person {
            let hours = summary.quietHours.map {
                "\($0.window) \($0.days.count == 7 ? "every day" : $0.days.joined(separator: ",")) (\($0.timeZone))"
            }
            print("quiet hours of \(person.email): \(hours ?? "none")")
        }
        print("P0 activity events are always pushed, at once; a tenant's digest leaves what asks the person to act immediate.")
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a person's preferences (or the tenant's defaults).")

        @Flag(name: .customLong("tenant-default"), help: "The tenant's defaults instead of a person's.") var tenantDefault = false
        @OptionGroup var actor: ActorOptions
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let email = tenantDefault ? nil : try actor.email()
            let summary = try await withTenant(tenant) { session in
                var person: Person?
                if let email { person = try await session.person(email: email) }
                return try await session.preferences(for: person)
            }
            if options.json { return try printJSON(summary) }
            PrefsCommand.show(summary)
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set how an event is pushed: immediate, digest or off.",
            discussion: """
                Examples: herald prefs set activity.started digest --app manager --as alice@acme.test; \
                herald prefs set chat.message off --conversation ID --as bob@acme.test (default: follow chat.message).
                """)

        @Argument(help: "The event, e.g. activity.started or chat.message.") var event: String
        @Argument(help: "immediate (or on), digest, or off; with --conversation also default.") var value: String
        @Option(help: "member or manager (default: every app the event reaches).") var app: String?
        @Option(help: "Only this conversation (chat.message).") var conversation: String?
        @Flag(name: .customLong("tenant-default"), help: "For everyone who set nothing (admins).") var tenantDefault = false
        @OptionGroup var actor: ActorOptions
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let event = try Input.choice(event, field: "event", as: EventKind.self)
            let app = try app.map { try Input.choice($0, field: "app", as: AppKind.self) }
            let conversation = try conversation.map { try Input.id($0, field: "--conversation") }
            if conversation != nil {
                guard event == .chatMessage else { throw ValidationError("--conversation goes with chat.message") }
                guard app == nil, !tenantDefault else { throw ValidationError("--conversation is one person's, on every app") }
            }
            let isDefault = conversation != nil && value.lowercased() == "default"
            let mode = isDefault ? nil : try PushMode.parse(value, field: "the setting")
            let email = try actor.email()
            let summary = try await withTenant(tenant) { session in
                let actor = try await session.person(email: email)
                let person = tenantDefault ? nil : actor
                if let conversation {
                    try await session.setConversationMode(mode, conversation: conversation, for: actor)
                } else if let mode {
                    try await session.setPreference(event, app: app, mode: mode, for: person, by: actor)
                }
                return try await session.preferences(for: person)
            }
            if options.json { return try printJSON(summary) }
            PrefsCommand.show(summary)
        }
    }

    struct ChannelCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "channel", abstract: "Set how a person hears of an event: push, push_only, both or email.",
            discussion: """
                push (the default): pushed, and emailed when no device of theirs can be pushed; push_only: never emailed \
                (what an email's unsubscribe link sets); both: pushed and emailed; email: emailed instead of pushed. \
                Example: herald prefs channel activity.assigned both --as erin@acme.test. See docs/notifications.md#email.
                """)

        @Argument(help: "The event, e.g. activity.assigned or chat.message.") var event: String
        @Argument(help: "push, push_only, both or email.") var channel: String
        @Option(help: "member or manager (default: every app the event reaches).") var app: String?
        @OptionGroup var actor: ActorOptions
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let event = try Input.choice(event, field: "event", as: EventKind.self)
            let channel = try Input.choice(channel, field: "channel", as: NotificationChannel.self)
            let app = try app.map { try Input.choice($0, field: "app", as: AppKind.self) }
            let email = try actor.email()
            let summary = try await withTenant(tenant) { session in
                let person = try await session.person(email: email)
                try await session.setChannel(channel, for: event, app: app, of: person)
                return try await session.preferences(for: person)
            }
            if options.json { return try printJSON(summary) }
            PrefsCommand.show(summary)
        }
    }

    struct DigestWindowCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "digest-window", abstract: "Set how long a person's digest gathers before it is pushed.",
            discussion: """
                A window opens at the first gathered event and ends after 1m, 5m, 15m, 1h (the default) or 4h, or at the \
                next daily HH:MM on the person's own clock; or at 50 items. Example: herald prefs digest-window \
                "daily 08:00" --channel email --as alice@acme.test (the digest by email instead of a push).
                """)

        @Argument(help: "1m, 5m, 15m, 1h, 4h or \"daily HH:MM\".") var window: String
        @Option(help: "push (the default) or email: where the digest goes.") var channel: String?
        @OptionGroup var actor: ActorOptions
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let window = try DigestWindow.parse(window)
            let byEmail = try channel.map { channel -> Bool in
                guard channel == "push" || channel == "email" else { throw InputError("--channel is push or email") }
                return channel == "email"
            }
            let email = try actor.email()
            let summary = try await withTenant(tenant) { session in
                let person = try await session.person(email: email)
                try await session.setDigestWindow(window, for: person)
                if let byEmail { try await session.setDigestChannel(email: byEmail, for: person) }
                return try await session.preferences(for: person)
            }
            if options.json { return try printJSON(summary) }
            PrefsCommand.show(summary)
        }
    }

    struct QuietHoursCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "quiet-hours", abstract: "Set or remove a person's quiet hours (on their own clock).",
            discussion: """
                Example: herald prefs quiet-hours 22:00-07:00 --days mon-fri --as chidi@acme.test; \
                herald prefs quiet-hours off --as chidi@acme.test. A window that crosses midnight belongs to the day it starts.
                """)

        @Argument(help: "HH:MM-HH:MM, or off.") var window: String
        @Option(help: "The days a window starts on: mon-fri, sat,sun, … (default: every day).") var days: String?
        @OptionGroup var actor: ActorOptions
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let off = window.trimmingCharacters(in: .whitespaces).lowercased() == "off"
            if off, days != nil { throw ValidationError("--days goes with a window, not with off") }
            let hours = off ? nil : try QuietHours.parse(window, days: days)
            let email = try actor.email()
            let summary = try await withTenant(tenant) { session in
                let person = try await session.person(email: email)
                try await session.setQuietHours(hours, for: person)
                return try await session.preferences(for: person)
            }
            if options.json { return try printJSON(summary) }
            PrefsCommand.show(summary)
        }
    }
}
