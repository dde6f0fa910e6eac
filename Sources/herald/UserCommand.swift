import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore

struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Add and list the people of a tenant.", subcommands: [Add.self, List.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a person.")

        @Argument(help: "Their email, unique in the tenant.") var email: String
        @Option(help: "Display name, as notifications show it.") var name: String
        @Flag(help: "A tenant admin: may inspect everything and act as a manager of any team.") var admin = false
        @Option(help: "Locale for their notifications, e.g. en, de, pt-BR.") var locale = "en"
        @Option(name: .customLong("time-zone"), help: "IANA time zone for dates in their notifications.") var timeZone = "UTC"
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let person = try await withTenant(tenant) {
                try await $0.addPerson(email: email, name: name, isAdmin: admin, locale: locale, timeZone: timeZone)
            }
            if options.json { return try printJSON(person) }
            print("added \(person.email) (\(person.id.text))")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the tenant's people.")

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let people = try await withTenant(tenant) { try await $0.people() }
            if options.json { return try printJSON(people) }
            var table = TextTable("EMAIL", "NAME", "ADMIN", "LOCALE", "TIME ZONE")
            for person in people { table.add(person.email, person.name, person.isAdmin ? "yes" : "", person.locale, person.timeZone) }
            print(table.render(empty: "nobody yet (herald user add EMAIL --name N)"))
        }
    }
}
