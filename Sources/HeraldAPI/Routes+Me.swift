import Foundation
import HeraldCore
import Hummingbird

extension HeraldAPI {
    struct MeOutput: Encodable {
        struct TenantOutput: Encodable {
            let slug: String
            let name: String
        }
        struct CredentialOutput: Encodable {
            let id: UUID
            let kind: CredentialKind
        }
        let tenant: TenantOutput
        let credential: CredentialOutput
        /// Who acts (nil for a tenant key acting as itself).
        let person: Person?
        let isAdmin: Bool
    }

    /// `GET /v1/me`: who the credential acts as, in which tenant.
    func addMe(to group: RouterGroup<APIContext>) {
        group.get("me") { _, context in
            let caller = try context.requireCaller()
            return try JSONBody.response(
                MeOutput(
                    tenant: .init(slug: caller.tenant.slug, name: caller.tenant.name), credential: .init(id: caller.credentialID, kind: caller.kind),
                    person: caller.person, isAdmin: caller.isAdmin))
        }
    }
}
