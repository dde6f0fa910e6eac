import Foundation
import HeraldCore
import HeraldTemplates
import HeraldTesting
import Testing

@Suite struct ValidationTests {
    @Test func anUnknownVariableIsRefusedByName() {
        let error = #expect(throws: InputError.self) {
            try MessageTemplate(event: .activity(.activityAssigned), source: "Hi\n---\n{{varaible}} did {{name}}")
        }
        #expect(error?.description.contains("{{varaible}}") == true)
    }

    @Test func unknownVariablesInsideSectionsAreFoundToo() {
        #expect(throws: InputError.self) {
            try MessageTemplate(event: .activity(.activityAssigned), source: "Hi\n---\n{{#isP0}}{{urgentText}}{{/isP0}}{{name}}")
        }
        #expect(throws: InputError.self) {
            try MessageTemplate(event: .activity(.activityAssigned), source: "Hi\n---\n{{^isP0}}{{calm}}{{/isP0}}{{name}}")
        }
        // Chat variables are not activity variables.
        #expect(throws: InputError.self) { try MessageTemplate(event: .activity(.activityAssigned), source: "{{sender}}\n---\n{{text}}") }
    }

    @Test(arguments: [
        ("no separator", "a line holding only ---"),
        ("Title\n---\n{{#name}}unclosed", "does not parse"),
        ("Title\n---\n{{> partial}}", "not supported"),
        ("\n---\n{{name}}", "title renders empty"),
        ("Title\n---\n", "body renders empty")
    ])
    func brokenTemplatesAreRefused(source: String, message: String) {
        let error = #expect(throws: InputError.self) { try MessageTemplate(event: .activity(.activityApproved), source: source) }
        #expect(error?.description.contains(message) == true, "\(error?.description ?? "")")
    }

    @Test func aGoodOverrideRendersAndKeepsItsSource() throws {
        let source = "Heads up\r\n---\r\n{{#isP0}}URGENT {{/isP0}}{{manager}} approved {{name}} ({{priority}}) on {{date}}"
        let template = try MessageTemplate(event: .activity(.activityApproved), source: source)
        #expect(template.source == source)
        let activity = TemplateVariables.Activity(
            name: "Ship v2", manager: "Alice", member: "Chidi", actor: "Alice", team: "Ops", priority: .p0,
            deadline: LocalDate(Date(timeIntervalSince1970: 0), in: .gmt), occurredAt: Date(timeIntervalSince1970: 0))
        #expect(
            template.render(activity, for: .init()) == RenderedMessage(title: "Heads up", body: "URGENT Alice approved Ship v2 (P0) on Jan 1, 1970"))
    }

    @Test func oversizedSourcesAreRefused() {
        #expect(throws: InputError.self) {
            try MessageTemplate(event: .activity(.activityApproved), source: "T\n---\n" + String(repeating: "x", count: 5000))
        }
    }

    actor Overrides: TemplateOverrideSource {
        var stored: [UUID: [TemplateKey: String]] = [:]
        var reads = 0
        func set(_ tenant: UUID, _ key: TemplateKey, _ source: String?) { stored[tenant, default: [:]][key] = source }
        func overrides(tenant: UUID) async throws -> [TemplateKey: String] {
            reads += 1
            return stored[tenant] ?? [:]
        }
    }

    @Test func overridesWinAndAreReReadAfterTheRefreshInterval() async throws {
        let source = Overrides()
        let clock = ManualClock()
        let catalog = TemplateCatalog(overrides: source, refreshInterval: .seconds(5), now: { clock.now() })
        let tenant = UUID()
        let key = TemplateKey(event: .chatDirect, locale: "en")
        let chat = TemplateVariables.Chat(sender: "Alice", group: nil, isGroup: false, text: "Hi")

        #expect(try await catalog.template(for: .chatDirect, locale: "en", tenant: tenant).render(chat).title == "Alice")
        await source.set(tenant, key, "From {{sender}}\n---\n{{text}}")
        // Cached: the default still serves until the interval passes.
        #expect(try await catalog.template(for: .chatDirect, locale: "en", tenant: tenant).render(chat).title == "Alice")
        clock.advance(5.1)
        #expect(try await catalog.template(for: .chatDirect, locale: "en", tenant: tenant).render(chat).title == "From Alice")
        // Other tenants are untouched, and an invalidation takes effect at once.
        #expect(try await catalog.template(for: .chatDirect, locale: "en", tenant: UUID()).render(chat).title == "Alice")
        await source.set(tenant, key, nil)
        await catalog.invalidate(tenant: tenant)
        #expect(try await catalog.template(for: .chatDirect, locale: "en", tenant: tenant).render(chat).title == "Alice")
        #expect(await source.reads >= 2)
    }
}
