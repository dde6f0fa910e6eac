import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore

struct TeamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "team", abstract: "Create teams and manage who is in them.",
        subcommands: [Create.self, AddMember.self, RemoveMember.self, List.self, Members.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a team.")

        @Argument(help: "Lowercase letters, digits and dashes, e.g. field-ops.") var slug: String
        @Option(help: "Display name.") var name: String
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let team = try await withTenant(tenant) { try await $0.createTeam(slug: slug, name: name) }
            if options.json { return try printJSON(team) }
            print("created team \(team.slug) (\(team.id.text))")
        }
    }

    struct AddMember: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-member", abstract: "Give a person a role in a team (replacing the role they had there).")

        @Argument(help: "The team's slug.") var team: String
        @Argument(help: "The person's email.") var email: String
        @Option(help: "manager or member.") var role: String
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let role = try Input.choice(role, field: "role", as: TeamRole.self)
            let (membership, previous) = try await withTenant(tenant) {
                try await $0.setMembership(team: team, email: email, role: role)
            }
            if options.json { return try printJSON(membership) }
            switch previous {
            case nil: print("\(membership.person.email) is now a \(role.rawValue) of \(membership.team)")
            case role?: print("\(membership.person.email) was already a \(role.rawValue) of \(membership.team)")
            case let old?: print("\(membership.person.email) is now a \(role.rawValue) of \(membership.team) (was \(old.rawValue))")
            }
        }
    }

    struct RemoveMember: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-member",
            abstract: "Take a person out of a team: they see nothing new of it, and leave its group conversations.")

        @Argument(help: "The team's slug.") var team: String
        @Argument(help: "The person's email.") var email: String
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let membership = try await withTenant(tenant) { try await $0.removeMembership(team: team, email: email) }
            if options.json { return try printJSON(membership) }
            print("\(membership.person.email) is no longer in \(membership.team) (was a \(membership.role.rawValue))")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the tenant's teams.")

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let teams = try await withTenant(tenant) { try await $0.teams() }
            if options.json { return try printJSON(teams) }
            var table = TextTable("SLUG", "NAME", "ID")
            for team in teams { table.add(team.slug, team.name, team.id.text) }
            print(table.render(empty: "no teams yet (herald team create SLUG --name N)"))
        }
    }

    struct Members: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a team's people and their roles.")

        @Argument(help: "The team's slug.") var team: String
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let members = try await withTenant(tenant) { try await $0.members(team: team) }
            if options.json { return try printJSON(members) }
            var table = TextTable("EMAIL", "NAME", "ROLE")
            for member in members { table.add(member.person.email, member.person.name, member.role.rawValue) }
            print(table.render(empty: "team \(team) has nobody yet (herald team add-member)"))
        }
    }
}
