import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

extension HeraldAPI {
    /// `POST /v1/people`.
    struct PersonBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["email", "name", "admin", "locale", "timeZone"]
        let email: String
        let name: String
        let admin: Bool?
        let locale: String?
        let timeZone: String?
    }

    /// `POST /v1/teams`.
    struct TeamBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["slug", "name"]
        let slug: String
        let name: String
    }

    /// `PUT /v1/teams/{slug}/members/{email}`.
    struct MembershipBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["role"]
        let role: String
    }

    /// The tenant's people and teams: anyone in the tenant may read them; only admins (and
    /// tenant keys) change them.
    func addDirectory(to group: RouterGroup<APIContext>) {
        group.get("people") { _, context in
            let caller = try context.requireCaller()
            let people = try await store.withTenant(caller.tenant) { try await $0.people() }
            return try JSONBody.response(["items": people])
        }

        group.post("people") { request, context in
            try await creating(request, context) { caller, bytes in
                try caller.requireAdmin("add people")
                let body = try JSONBody.decode(PersonBody.self, bytes: bytes, request: request)
                let email = try field("email") { try Input.email(body.email) }
                let name = try field("name") { try Input.name(body.name) }
                let locale = try field("locale") { try Input.locale(body.locale ?? "en") }
                let timeZone = try field("timeZone") { try Input.timeZone(body.timeZone ?? "UTC") }
                let person = try await store.withTenant(caller.tenant) {
                    try await $0.addPerson(email: email, name: name, isAdmin: body.admin ?? false, locale: locale, timeZone: timeZone)
                }
                return try JSONBody.answer(person, status: .created, headers: [.location: "/v1/people/\(pathSegment(person.email))"])
            }
        }

        group.get("people/:email") { _, context in
            let caller = try context.requireCaller()
            let email = try context.parameters.decoded("email")
            let person = try await store.withTenant(caller.tenant) { session in
                do {
                    return try await session.person(email: email)
                } catch is InputError {
                    throw Problem.notFound("no such person")
                }
            }
            return try JSONBody.response(person)
        }

        group.get("teams") { _, context in
            let caller = try context.requireCaller()
            let teams = try await store.withTenant(caller.tenant) { try await $0.teams() }
            return try JSONBody.response(["items": teams])
        }

        group.post("teams") { request, context in
            try await creating(request, context) { caller, bytes in
                try caller.requireAdmin("create teams")
                let body = try JSONBody.decode(TeamBody.self, bytes: bytes, request: request)
                let slug = try field("slug") { try Input.slug(body.slug, field: "team") }
                let name = try field("name") { try Input.name(body.name) }
                let team = try await store.withTenant(caller.tenant) { try await $0.createTeam(slug: slug, name: name) }
                return try JSONBody.answer(team, status: .created, headers: [.location: "/v1/teams/\(team.slug)/members"])
            }
        }

        group.get("teams/:slug/members") { _, context in
            let caller = try context.requireCaller()
            let slug = try context.parameters.decoded("slug")
            let members = try await store.withTenant(caller.tenant) { try await $0.members(team: slug) }
            return try JSONBody.response(["items": members])
        }

        group.put("teams/:slug/members/:email") { request, context in
            let caller = try context.requireCaller()
            try caller.requireAdmin("change teams")
            let body = try await JSONBody.decode(MembershipBody.self, from: request, context: context)
            let role = try field("role") { try Input.choice(body.role, field: "role", as: TeamRole.self) }
            let slug = try context.parameters.decoded("slug")
            let email = try context.parameters.decoded("email")
            let (membership, previous) = try await store.withTenant(caller.tenant) {
                try await $0.setMembership(team: slug, email: email, role: role)
            }
            return try JSONBody.response(membership, status: previous == nil ? .created : .ok)
        }

        // Someone leaves a team (docs/concepts.md#people-leave-teams): admins and tenant keys.
        group.delete("teams/:slug/members/:email") { _, context in
            let caller = try context.requireCaller()
            try caller.requireAdmin("change teams")
            let slug = try context.parameters.decoded("slug")
            let email = try context.parameters.decoded("email")
            _ = try await store.withTenant(caller.tenant) { try await $0.removeMembership(team: slug, email: email) }
            return Response(status: .noContent)
        }
    }
}
