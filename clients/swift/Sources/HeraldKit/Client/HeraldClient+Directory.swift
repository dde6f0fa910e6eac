import Foundation

/// The tenant's people and teams, and the activities managers assign (docs/api.md in the
/// Herald repository). Who may do what is the server's to say: a refusal is
/// `HeraldError.forbidden`.
extension HeraldClient {
    /// Assigns an activity to a member of `team` (its managers, and admins). With
    /// `idempotencyKey`, the same call sent twice (an app that did not hear the answer) assigns
    /// once and answers the same activity.
    @discardableResult
    public func assign(
        _ name: String, to assignee: String, team: String, deadline: String, priority: Priority? = nil, idempotencyKey: String? = nil
    ) async throws -> Activity {
        struct Body: Encodable {
            var team, assignee, name, deadline: String
            var priority: Priority?
        }
        let body = Body(team: team, assignee: assignee, name: name, deadline: deadline, priority: priority)
        return try await call("POST", "/v1/activities", json: body, headers: idempotency(idempotencyKey)).0
    }

    /// The tenant's people.
    public func people() async throws -> [Person] { try await call("GET", "/v1/people", as: Items<Person>.self).0.items }

    /// One person, by email.
    public func person(_ email: String) async throws -> Person { try await call("GET", "/v1/people/\(escaped(email))").0 }

    /// Adds a person (admins).
    @discardableResult
    public func addPerson(_ person: NewPerson, idempotencyKey: String? = nil) async throws -> Person {
        try await call("POST", "/v1/people", json: person, headers: idempotency(idempotencyKey)).0
    }

    /// Issues a token for a person (admins, or a tenant key: what an app's backend does for
    /// its `TokenProvider`). `expiresIn`: `30d`, `12h`, … (nil: the server's default).
    public func issueToken(for email: String, name: String? = nil, expiresIn: String? = nil) async throws -> IssuedToken {
        var body: [String: String] = [:]
        body["name"] = name
        body["expiresIn"] = expiresIn
        return try await call("POST", "/v1/people/\(escaped(email))/tokens", json: body).0
    }

    /// A person's tokens (never their secrets).
    public func tokens(of email: String) async throws -> [Credential] {
        try await call("GET", "/v1/people/\(escaped(email))/tokens", as: Items<Credential>.self).0.items
    }

    /// Revokes a token: requests with it are refused from then on.
    public func revokeToken(_ id: UUID, of email: String) async throws {
        try await perform("DELETE", "/v1/people/\(escaped(email))/tokens/\(id.lowercased)")
    }

    /// The teams the caller may see (all of them, for admins).
    public func teams() async throws -> [Team] { try await call("GET", "/v1/teams", as: Items<Team>.self).0.items }

    /// Creates a team (admins).
    @discardableResult
    public func createTeam(slug: String, name: String, idempotencyKey: String? = nil) async throws -> Team {
        try await call("POST", "/v1/teams", json: ["slug": slug, "name": name], headers: idempotency(idempotencyKey)).0
    }

    /// A team's members and managers.
    public func members(of team: String) async throws -> [Membership] {
        try await call("GET", "/v1/teams/\(escaped(team))/members", as: Items<Membership>.self).0.items
    }

    /// Puts a person in a team with `role`, or changes their role (admins).
    @discardableResult
    public func setMembership(_ email: String, in team: String, role: TeamRole) async throws -> Membership {
        try await call("PUT", "/v1/teams/\(escaped(team))/members/\(escaped(email))", json: ["role": role]).0
    }

    /// Takes a person out of a team (admins).
    public func removeMembership(_ email: String, from team: String) async throws {
        try await perform("DELETE", "/v1/teams/\(escaped(team))/members/\(escaped(email))")
    }

    func idempotency(_ key: String?) -> [(name: String, value: String)] {
        key.map { [(name: "Idempotency-Key", value: $0)] } ?? []
    }
}
