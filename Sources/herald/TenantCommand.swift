import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore

struct TenantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tenant", abstract: "Create and list tenants (organisations).", subcommands: [Create.self, List.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a tenant; prints its slug and id.")

        @Argument(help: "Lowercase letters, digits and dashes, e.g. acme.") var slug: String
        @Option(help: "Display name (default: the slug).") var name: String?
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let tenant = try await withStore { try await $0.createTenant(slug: slug, name: name ?? slug) }
            if options.json { return try printJSON(tenant) }
            print("created tenant \(tenant.slug) (\(tenant.id.text))")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tenants.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let tenants = try await withStore { try await $0.tenants() }
            if options.json { return try printJSON(tenants) }
            var table = TextTable("SLUG", "NAME", "ID", "CREATED")
            for tenant in tenants { table.add(tenant.slug, tenant.name, tenant.id.text, tenant.createdAt.shortDisplay) }
            print(table.render(empty: "no tenants yet (herald tenant create SLUG)"))
        }
    }
}
