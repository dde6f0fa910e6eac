import Foundation
import HeraldCore

/// Who a request acts as: a person (their token, or a tenant key on behalf of them), or the
/// tenant's backend itself (a tenant key alone, which may do what an admin may).
struct Caller: Sendable {
    let tenant: Tenant
    let credentialID: UUID
    let kind: CredentialKind
    /// The person acting; nil for a tenant key acting as itself.
    let person: Person?

    /// An admin person, or a tenant key acting as itself.
    var isAdmin: Bool { policy.runsTheTenant }

    /// What this caller may see and do.
    var policy: AccessPolicy { AccessPolicy(person) }

    /// The person, for what only a person can do (assign, start, register a device…).
    func actor() throws -> Person {
        guard let person else {
            throw Problem(
                .badRequest, "A person must act",
                detail: "a tenant key acts on behalf of a person here: send Herald-On-Behalf-Of with their email")
        }
        return person
    }

    /// Refuses anyone but an admin (or a tenant key acting as itself).
    func requireAdmin(_ what: String) throws {
        guard isAdmin else { throw Problem(.forbidden, "Admins only", detail: "only a tenant admin or a tenant key may \(what)") }
    }
}
