import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

extension HeraldAPI {
    /// `POST /v1/people/{email}/tokens`.
    struct TokenBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["name", "expiresIn"]
        let name: String?
        /// A duration such as `90d`.
        let expiresIn: String?
    }

    struct CreatedToken: Encodable {
        let credential: CredentialRecord
        /// Shown this once; only its hash is kept.
        let secret: String
    }

    /// How a tenant's backend signs its people in: it mints a person token (admins only)
    /// and hands it to the app. The tokens of a person can be listed and revoked the same way.
    func addPeopleTokens(to group: RouterGroup<APIContext>) {
        group.post("people/:email/tokens") { request, context in
            let caller = try context.requireCaller()
            try caller.requireAdmin("create a person's token")
            let email = try field("email") { try Input.email(try context.parameters.decoded("email")) }
            let body = try await JSONBody.decode(TokenBody.self, from: request, context: context)
            let lifetime = try body.expiresIn.map { text in try field("expiresIn") { try Input.duration(text, field: "expiresIn") } }
            let creator = caller.person.map { "person \($0.email)" } ?? "tenant key \(caller.credentialID.lowercasedString)"
            let (credential, secret) = try await store.withTenant(caller.tenant) {
                try await $0.createPersonToken(for: email, name: body.name, lifetime: lifetime, by: creator)
            }
            return try JSONBody.response(
                CreatedToken(credential: credential, secret: secret), status: .created,
                headers: [.location: "/v1/people/\(pathSegment(email))/tokens/\(credential.id.lowercasedString)"])
        }

        group.get("people/:email/tokens") { _, context in
            let caller = try context.requireCaller()
            try caller.requireAdmin("list a person's tokens")
            let email = try field("email") { try Input.email(try context.parameters.decoded("email")) }
            let tokens = try await store.withTenant(caller.tenant) { try await $0.credentials(kind: .personToken, person: email) }
            return try JSONBody.response(["items": tokens])
        }

        group.get("people/:email/tokens/:id") { _, context in
            let caller = try context.requireCaller()
            try caller.requireAdmin("read a person's tokens")
            let token = try await personToken(context, caller: caller)
            return try JSONBody.response(token)
        }

        group.delete("people/:email/tokens/:id") { _, context in
            let caller = try context.requireCaller()
            try caller.requireAdmin("revoke a person's token")
            let token = try await personToken(context, caller: caller)
            _ = try await store.withTenant(caller.tenant) { try await $0.revokeCredential(id: token.id) }
            // This server refuses it from the next request on; the others when they hear of it.
            credentials.forget(tenant: caller.tenant.id)
            return Response(status: .noContent)
        }
    }

    /// The token the path names, if it is that person's.
    private func personToken(_ context: APIContext, caller: Caller) async throws -> CredentialRecord {
        let email = try context.parameters.decoded("email").lowercased()
        guard let id = UUID(uuidString: try context.parameters.require("id")) else { throw Problem.notFound("no such token") }
        let token = try await store.withTenant(caller.tenant) { try await $0.credential(id: id) }
        guard token.kind == .personToken, token.person?.email == email else { throw Problem.notFound("no such token") }
        return token
    }
}
