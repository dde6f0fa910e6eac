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
                try await $0.setTemplate(.chatDirect, locale: "en", source: "DM from {{sender}}\n---\n{{text}}", by: "alice@acme.test")
            }
            let chat = TemplateVariables.Chat(sender: "Alice", group: nil, isGroup: false, text: "Hi")
            #expect(try await catalog.template(for: .chatDirect, locale: "en", tenant: acme.tenant.id).render(chat).title == "DM from Alice")
            #expect(try await catalog.template(for: .chatDirect, locale: "en", tenant: globex.tenant.id).render(chat).title == "Alice")
            #expect(try await acme.run { try await $0.templateOverrides() }.map(\.updatedBy) == ["alice@acme.test"])

            let refused = await #expect(throws: InputError.self) {
                try await acme.run { try await $0.setTemplate(.chatDirect, locale: "en", source: "{{nope}}\n---\n{{text}}", by: "x") }
            }
            #expect(refused?.description.contains("{{nope}}") == true)
            #expect(try await catalog.template(for: .chatDirect, locale: "en", tenant: acme.tenant.id).render(chat).title == "DM from Alice")

            #expect(try await acme.run { try await $0.resetTemplate(.chatDirect, locale: "en") })
            #expect(try await catalog.template(for: .chatDirect, locale: "en", tenant: acme.tenant.id).render(chat).title == "Alice")
        }
    }
}
