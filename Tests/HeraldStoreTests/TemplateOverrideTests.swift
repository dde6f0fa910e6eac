import Foundation
import HeraldCore
import HeraldStore
import HeraldTemplates
import HeraldTestSupport
import Testing

@Suite struct TemplateOverrideTests {
    @Test func aSavedOverrideReachesTheCatalogOfItsTenantOnly() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store, slug: "acme")
            let globex = try await WorkflowFixture.make(store, slug: "globex")
            let catalog = TemplateCatalog(overrides: StoredTemplateOverrides(store: store), refreshInterval: .zero)
            _ = try await acme.run {
                try await $0.setTemplate(.chatDirect, locale: "en", source: "DM from {{sender}}\n---\n{{text}}", by: "root@acme.test")
            }
            let chat = TemplateVariables.Chat(sender: "Alice", group: nil, isGroup: false, text: "Hi")
            #expect(try await catalog.template(for: .chatDirect, locale: "en", tenant: acme.tenant.id).render(chat).title == "DM from Alice")
            #expect(try await catalog.template(for: .chatDirect, locale: "en", tenant: globex.tenant.id).render(chat).title == "Alice")
            #expect(try await acme.run { try await $0.templateOverrides() }.map(\.updatedBy) == ["root@acme.test"])

            let refused = await #expect(throws: InputError.self) {
                try await acme.run { try await $0.setTemplate(.chatDirect, locale: "en", source: "{{nope}}\n---\n{{text}}", by: "root@acme.test") }
            }
            #expect(refused?.description.contains("{{nope}}") == true)
            #expect(try await catalog.template(for: .chatDirect, locale: "en", tenant: acme.tenant.id).render(chat).title == "DM from Alice")

            #expect(try await acme.run { try await $0.resetTemplate(.chatDirect, locale: "en", by: "root@acme.test") })
            #expect(try await catalog.template(for: .chatDirect, locale: "en", tenant: acme.tenant.id).render(chat).title == "Alice")
        }
    }

    /// The wording is the tenant's: a manager or a member may neither change nor reset it.
    @Test func onlyAnAdminChangesTheTenantsTemplates() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store, slug: "acme")
            for email in ["alice@acme.test", "chidi@acme.test"] {
                let refused = await #expect(throws: StoreError.self) {
                    try await acme.run { try await $0.setTemplate(.chatDirect, locale: "en", source: "Hi\n---\n{{text}}", by: email) }
                }
                #expect(refused?.code == .forbidden)
            }
            _ = try await acme.run { try await $0.setTemplate(.chatDirect, locale: "en", source: "Hi\n---\n{{text}}", by: "root@acme.test") }
            let refused = await #expect(throws: StoreError.self) {
                try await acme.run { try await $0.resetTemplate(.chatDirect, locale: "en", by: "chidi@acme.test") }
            }
            #expect(refused?.code == .forbidden)
            #expect(try await acme.run { try await $0.templateOverrides() }.count == 1)
        }
    }

    /// A template must give a title and a body for every priority and with or without the
    /// optional parts; a parse error names the line and the problem in words.
    @Test func aTemplateThatRendersEmptyOrDoesNotParseIsRefusedInWords() throws {
        let emptyForP2 = #expect(throws: InputError.self) {
            try MessageTemplate(event: .activity(.activityAssigned), source: "T\n---\n{{#isP0}}URGENT {{name}}{{/isP0}}")
        }
        #expect(emptyForP2?.description == "the body renders empty for a p1 activity with a reason and a group name")
        let unclosed = #expect(throws: InputError.self) {
            try MessageTemplate(event: .activity(.activityAssigned), source: "Title\n---\nfirst line\n{{#isP0}}never closed")
        }
        #expect(unclosed?.description == "the template does not parse: line 4 (the body): a section is opened and never closed")
        #expect(unclosed?.description.contains("Mustache") == false)
    }
}
