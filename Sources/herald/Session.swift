import ArgumentParser
import Foundation
import HeraldCore
import HeraldRuntime
import HeraldStore
import Logging

/// `--tenant SLUG`, defaulting to `HERALD_TENANT`.
struct TenantOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The tenant's slug (default: HERALD_TENANT).", valueName: "slug"))
    var tenant: String?

    func slug() throws -> String {
        if let tenant, !tenant.isEmpty { return tenant }
        if let value = ProcessInfo.processInfo.environment["HERALD_TENANT"], !value.isEmpty { return value }
        throw ValidationError("say which tenant: --tenant SLUG or HERALD_TENANT")
    }
}

/// `--as EMAIL`, defaulting to `HERALD_ACTOR`.
struct ActorOptions: ParsableArguments {
    @Option(name: .customLong("as"), help: ArgumentHelp("Who acts: their email (default: HERALD_ACTOR).", valueName: "email"))
    var actor: String?

    func email() throws -> String {
        if let actor, !actor.isEmpty { return actor }
        if let value = ProcessInfo.processInfo.environment["HERALD_ACTOR"], !value.isEmpty { return value }
        throw ValidationError("say who acts: --as EMAIL or HERALD_ACTOR")
    }
}

/// Herald as this process's environment configures it, logging as commands do.
func heraldEnvironment(logger: Logger = HeraldLogging.logger) -> HeraldEnvironment {
    HeraldEnvironment(logger: logger)
}

/// Opens the database (starting and migrating the embedded cluster on first use), runs
/// `body`, and closes the pool.
func withStore<Result>(_ body: (Store) async throws -> Result) async throws -> Result {
    try await heraldEnvironment().withStore(body)
}

/// `withStore`, then one transaction scoped to the tenant the options name.
func withTenant<Result>(_ options: TenantOptions, _ body: (TenantSession) async throws -> Result) async throws -> Result {
    let slug = try options.slug()
    return try await withStore { store in
        let tenant = try await store.tenant(slug: slug)
        return try await store.withTenant(tenant, body)
    }
}

extension StoreError: UserFacingError {}
extension InputError: UserFacingError {}

extension UUID {
    /// Ids as herald prints them: lowercase.
    var text: String { lowercasedString }
}
