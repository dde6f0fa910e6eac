import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore

struct PrefsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefs", abstract: "What a person wants pushed, and their quiet hours.",
        discussion: """
            Each event can be switched off per app, by the person or (--tenant-default, admins) for everyone who set \
            nothing; P0 activity events are pushed whatever is set. In quiet hours (on the person's own clock) a \
            non-P0 push waits until they end; P0 breaks through.
            """,
        subcommands: [Show.self, Set.self, QuietHoursCommand.self])

    static func show(_ summary: PreferenceSummary) {
        var table = TextTable("EVENT", "APP", "PUSH", "SET BY")
        for entry in summary.entries {
            table.add(entry.event.rawValue, entry.app.rawValue, entry.enabled ? "on" : "off", entry.origin.rawValue)
        }
        print(table.render(empty: ""))
        if let person = summary.person {
            let hours = summary.quietHours.map {
                "\($0.window) \($0.days.count == 7 ? "every day" : $0.days.joined(separator: ",")) (\($0.timeZone))"
            }
            print("quiet hours of \(person.email): \(hours ?? "none")")
        }
        print("P0 activity events are always pushed, at once.")
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
            abstract: "Switch pushes of an event on or off.",
            discussion: "Example: herald prefs set activity.started off --app manager --as alice@acme.test")

        @Argument(help: "The event, e.g. activity.started or chat.message.") var event: String
        @Argument(help: "on or off.") var value: String
        @Option(help: "member or manager (default: every app the event reaches).") var app: String?
        @Flag(name: .customLong("tenant-default"), help: "For everyone who set nothing (admins).") var tenantDefault = false
        @OptionGroup var actor: ActorOptions
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let event = try Input.choice(event, field: "event", as: EventKind.self)
            let enabled = try ReminderPolicy.onOrOff(value, field: "the setting")
            let app = try app.map { try Input.choice($0, field: "app", as: AppKind.self) }
            let email = try actor.email()
            let summary = try await withTenant(tenant) { session in
                let actor = try await session.person(email: email)
                let person = tenantDefault ? nil : actor
                try await session.setPreference(event, app: app, enabled: enabled, for: person, by: actor)
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
