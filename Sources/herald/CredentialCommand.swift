import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore

/// `herald token …`: credentials that act as one person, for the apps (docs/api.md).
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Create, list and revoke person tokens (the apps' credentials for herald serve).",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a token that acts as a person; its secret is printed once, alone on the last line.")

        @Option(help: "The person it acts as.") var user: String
        @Option(help: "What it is for, e.g. \"Bob's Pixel\" (default: the person's name).") var name: String?
        @Option(help: "How long it is valid, e.g. 90d (1m to 730d; default: until revoked).") var expires: String?
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let lifetime = try expires.map { try Input.duration($0, field: "expires") }
            let (credential, secret) = try await withTenant(tenant) {
                try await $0.createPersonToken(for: user, name: name, lifetime: lifetime, by: CredentialOutput.operator)
            }
            try CredentialOutput.printCreated(credential, secret: secret, json: options.json)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List person tokens (never their secrets).")

        @Option(help: "Only this person's tokens.") var user: String?
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let credentials = try await withTenant(tenant) { try await $0.credentials(kind: .personToken, person: user) }
            try CredentialOutput.printList(credentials, json: options.json, empty: "no tokens (herald token create)")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token: refused from the next request on.")

        @Argument(help: "The token's id (from herald token list).") var id: String
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await CredentialOutput.revoke(id, kind: .personToken, tenant: tenant, json: options.json)
        }
    }
}

/// `herald key …`: credentials for a tenant's backend.
struct KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Create, list and revoke tenant keys (a backend's credentials: act as admin, or on behalf of a person).",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a tenant key; its secret is printed once, alone on the last line.")

        @Option(help: "What it is for, e.g. \"billing backend\".") var name: String
        @Option(help: "How long it is valid, e.g. 365d (1m to 730d; default: until revoked).") var expires: String?
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let lifetime = try expires.map { try Input.duration($0, field: "expires") }
            let (credential, secret) = try await withTenant(tenant) {
                try await $0.createTenantKey(name: name, lifetime: lifetime, by: CredentialOutput.operator)
            }
            try CredentialOutput.printCreated(credential, secret: secret, json: options.json)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tenant keys (never their secrets).")

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let credentials = try await withTenant(tenant) { try await $0.credentials(kind: .tenantKey) }
            try CredentialOutput.printList(credentials, json: options.json, empty: "no keys (herald key create)")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key: refused from the next request on.")

        @Argument(help: "The key's id (from herald key list).") var id: String
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await CredentialOutput.revoke(id, kind: .tenantKey, tenant: tenant, json: options.json)
        }
    }
}

/// What token and key commands print.
enum CredentialOutput {
    /// Who the record says made a credential from the command line.
    static let `operator` = "operator (herald CLI)"

    struct Created: Encodable {
        let credential: CredentialRecord
        let secret: String
    }

    static func printCreated(_ credential: CredentialRecord, secret: String, json: Bool) throws {
        if json { return try printJSON(Created(credential: credential, secret: secret)) }
        let what = credential.kind == .personToken ? "token for \(credential.person?.email ?? "?")" : "tenant key"
        let until = credential.expiresAt.map { "valid until \($0.shortDisplay)" } ?? "valid until revoked"
        print("created \(what) \"\(credential.name)\", id \(credential.id.text), \(until)")
        print("the secret is shown only now; keep it safe:")
        print(secret)
    }

    static func printList(_ credentials: [CredentialRecord], json: Bool, empty: String) throws {
        if json { return try printJSON(credentials) }
        var table = TextTable("ID", "NAME", "PERSON", "PREFIX", "CREATED", "EXPIRES", "LAST USED", "STATE")
        for credential in credentials {
            let state = credential.revokedAt != nil ? "revoked" : (credential.expiresAt.map { $0 <= Date() } == true ? "expired" : "active")
            table.add(
                credential.id.text, credential.name, credential.person?.email ?? "—", credential.kind.secretPrefix + credential.prefix,
                credential.createdAt.shortDisplay, credential.expiresAt?.shortDisplay ?? "never",
                credential.lastUsedAt?.shortDisplay ?? "never", state)
        }
        print(table.render(empty: empty))
    }

    static func revoke(_ text: String, kind: CredentialKind, tenant: TenantOptions, json: Bool) async throws {
        let id = try Input.id(text, field: kind == .personToken ? "token" : "key")
        let credential = try await withTenant(tenant) { session in
            // A key's id given to `token revoke` (or the reverse) is not found, not revoked.
            guard try await session.credential(id: id).kind == kind else {
                throw StoreError(.notFound, "no \(kind == .personToken ? "token" : "key") \(id.text)")
            }
            return try await session.revokeCredential(id: id)
        }
        if json { return try printJSON(credential) }
        print("revoked \(credential.id.text) (\"\(credential.name)\")")
    }
}
