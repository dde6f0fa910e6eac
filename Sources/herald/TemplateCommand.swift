import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore
import HeraldTemplates

struct TemplateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "template", abstract: "See, try and override the wording of notifications.",
        discussion: """
            Events: \(TemplateEvent.allCases.map(\.rawValue).joined(separator: ", ")). A template is the title, a line \
            holding only ---, then the body (see templates/README.md for the variables). With --tenant, the tenant's \
            overrides apply; running workers pick up a saved override within 5 seconds.
            """,
        subcommands: [List.self, Show.self, Preview.self, Set.self, Reset.self])

    /// The template in effect for an event and locale: the tenant's override or the default.
    static func resolve(_ event: TemplateEvent, locale: String, tenant options: TenantOptions) async throws -> TemplateCatalog.Resolved {
        guard (try? options.slug()) != nil else {
            return try await TemplateCatalog().resolve(event, locale: locale, tenant: nil)
        }
        return try await withStore { store in
            let tenant = try await store.tenant(slug: try options.slug())
            return try await TemplateCatalog(overrides: StoredTemplateOverrides(store: store)).resolve(event, locale: locale, tenant: tenant.id)
        }
    }

    static func event(_ name: String) throws -> TemplateEvent {
        try Input.choice(name, field: "event", as: TemplateEvent.self)
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List events and locales, and the tenant's overrides.")

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        struct Entry: Encodable {
            let event: String
            let locale: String
            let origin: String
        }

        func run() async throws {
            let defaults = DefaultTemplates.bundled
            var entries = defaults.templates.keys.map { Entry(event: $0.event.rawValue, locale: $0.locale, origin: "default") }
            if (try? tenant.slug()) != nil {
                let overrides = try await withTenant(tenant) { try await $0.templateOverrides() }
                entries += overrides.map { Entry(event: $0.event.rawValue, locale: $0.locale, origin: "override by \($0.updatedBy)") }
            }
            entries.sort { ($0.event, $0.locale, $0.origin) < ($1.event, $1.locale, $1.origin) }
            if options.json { return try printJSON(entries) }
            var table = TextTable("EVENT", "LOCALE", "ORIGIN")
            for entry in entries { table.add(entry.event, entry.locale, entry.origin) }
            print(table.render(empty: "no templates"))
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the template in effect for an event and locale.")

        @Argument(help: "The event, e.g. activity.assigned.") var event: String
        @Option(help: "Locale (falls back to the language, then en).") var locale = "en"
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let event = try TemplateCommand.event(event)
            let locale = try Input.locale(locale)
            let resolved = try await TemplateCommand.resolve(event, locale: locale, tenant: tenant)
            if options.json {
                return try printJSON([
                    "event": event.rawValue, "locale": resolved.locale, "origin": resolved.isOverride ? "override" : "default",
                    "source": resolved.template.source
                ])
            }
            print("# \(event.rawValue), \(resolved.locale), \(resolved.isOverride ? "tenant override" : "default")")
            print(resolved.template.source.trimmingCharacters(in: .newlines))
        }
    }

    struct Preview: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show what a phone would show for an event.",
            discussion: """
                Sample data: Alice Moreau (manager) assigned "Ship v2" of team Field Ops to Chidi Okafor (member) at \
                2026-11-21 23:30 UTC with deadline 2026-11-28 (a reminder's wait began two hours earlier); chat from \
                Alice Moreau in the group "Launch crew"; a digest of seven updates in Field Ops (Bob Lee started "Replace \
                the pump seal", Carol Diaz asked for approval of "Fence repair", and five more).
                """)

        @Argument(help: "The event, e.g. activity.assigned.") var event: String
        @Option(help: "Locale (falls back to the language, then en).") var locale = "en"
        @Option(help: "p0 to p3.") var priority = "p0"
        @Option(name: .customLong("time-zone"), help: "The recipient's IANA time zone.") var timeZone = "UTC"
        @Option(help: "Chat text (cut to 100 characters).") var text = "On my way, see you at the launch!"
        @Option(help: "Chat group name (empty: an unnamed group).") var group = "Launch crew"
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let event = try TemplateCommand.event(event)
            let locale = try Input.locale(locale)
            let priority = try Input.priority(priority)
            let timeZone = try Input.timeZone(timeZone)
            let resolved = try await TemplateCommand.resolve(event, locale: locale, tenant: tenant)
            let message: RenderedMessage
            if event == .digest {
                message = resolved.template.render(TemplateVariables.sampleDigest)
            } else if event.isChat {
                message = resolved.template.render(
                    .init(
                        sender: "Alice Moreau", group: event == .chatDirect ? nil : group, isGroup: event != .chatDirect, text: text,
                        count: event == .chatSummary ? 3 : nil))
            } else {
                let memberActs: Swift.Set<EventKind> = [
                    .activityStarted, .activityCompletionRequested, .activityApprovalReminder, .activityEscalated, .activityDeadlineSoon,
                    .activityOverdue, .activityUnopened
                ]
                let occurredAt = Date(timeIntervalSince1970: 1_795_303_800)
                let activity = TemplateVariables.Activity(
                    name: "Ship v2", manager: "Alice Moreau", member: "Chidi Okafor",
                    actor: memberActs.contains { .activity($0) == event } ? "Chidi Okafor" : "Alice Moreau",
                    team: "Field Ops", priority: priority, deadline: LocalDate(Date(timeIntervalSince1970: 1_795_867_200), in: .utc),
                    occurredAt: occurredAt, reason: event == .activity(.activityRejected) ? "needs tests" : nil,
                    waitingSince: [.activity(.activityApprovalReminder), .activity(.activityEscalated), .activity(.activityUnopened)]
                        .contains(event) ? occurredAt.addingTimeInterval(-7200) : nil)
                message = resolved.template.render(activity, for: .init(locale: locale, timeZone: timeZone))
            }
            if options.json {
                return try printJSON([
                    "event": event.rawValue, "locale": resolved.locale, "origin": resolved.isOverride ? "override" : "default",
                    "title": message.title, "body": message.body
                ])
            }
            printFields([
                ("title", message.title), ("body", message.body),
                ("template", "\(resolved.locale), \(resolved.isOverride ? "tenant override" : "default")")
            ])
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Save the tenant's own template for an event (a tenant admin; checked first: it must parse, render and use known variables).")

        @Argument(help: "The event, e.g. activity.assigned.") var event: String
        @Option(help: "The template file: title, a line holding only ---, then the body.") var file: String
        @Option(help: "Locale the override is for.") var locale = "en"
        @OptionGroup var actor: ActorOptions
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let event = try TemplateCommand.event(event)
            let source: String
            do {
                source = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw InputError("cannot read \(file) as UTF-8 text")
            }
            let author = try actor.email()
            let saved = try await withTenant(tenant) { try await $0.setTemplate(event, locale: locale, source: source, by: author) }
            if options.json { return try printJSON(saved) }
            print("saved the \(saved.locale) template for \(saved.event.rawValue) (herald template preview \(saved.event.rawValue) to see it)")
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove the tenant's override, restoring the default (a tenant admin).")

        @Argument(help: "The event, e.g. activity.assigned.") var event: String
        @Option(help: "Locale of the override.") var locale = "en"
        @OptionGroup var actor: ActorOptions
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let event = try TemplateCommand.event(event)
            let actor = try actor.email()
            let removed = try await withTenant(tenant) { try await $0.resetTemplate(event, locale: locale, by: actor) }
            if options.json { return try printJSON(["removed": removed]) }
            print(removed ? "restored the default \(locale) template for \(event.rawValue)" : "there was no \(locale) override for \(event.rawValue)")
        }
    }
}
