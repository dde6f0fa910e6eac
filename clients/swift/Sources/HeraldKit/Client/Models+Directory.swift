import Foundation

// The tenant's people, teams and tokens as a manager's or an admin's app reads them
// (docs/api.md in the Herald repository, "People and teams").

/// A team of the tenant.
public struct Team: Codable, Sendable, Hashable, Identifiable {
    public var id: UUID
    public var slug: String
    public var name: String
}

/// What someone is in a team.
public enum TeamRole: OpenEnum {
    /// Assigns the team's activities and approves them.
    case manager
    case member
    case unknown(String)
    public static let known: [TeamRole] = [.manager, .member]
    public var rawValue: String {
        switch self {
        case .manager: "manager"
        case .member: "member"
        case .unknown(let value): value
        }
    }
}

/// Someone's place in a team.
public struct Membership: Codable, Sendable, Hashable {
    /// The team's slug.
    public var team: String
    public var person: PersonReference
    public var role: TeamRole
}

/// A person to add (`POST /v1/people`, admins).
public struct NewPerson: Codable, Sendable, Hashable {
    public var email: String
    public var name: String
    public var admin: Bool?
    /// `en`, `de`, `pt-BR`: the language of their notifications.
    public var locale: String?
    /// An IANA zone (`Europe/Berlin`): their quiet hours' and reminders' clock.
    public var timeZone: String?
    public init(email: String, name: String, admin: Bool? = nil, locale: String? = nil, timeZone: String? = nil) {
        self.email = email
        self.name = name
        self.admin = admin
        self.locale = locale
        self.timeZone = timeZone
    }
}

/// A person token or a tenant key, as listed (never its secret).
public struct Credential: Codable, Sendable, Hashable, Identifiable {
    public var id: UUID
    /// `person_token` or `tenant_key`.
    public var kind: String
    public var name: String
    /// The secret's first characters, to tell tokens apart.
    public var prefix: String
    public var person: PersonReference?
    public var createdAt: Date
    public var createdBy: String
    public var expiresAt: Date?
    public var revokedAt: Date?
    public var lastUsedAt: Date?
}

/// A token just issued: its secret is shown this once.
public struct IssuedToken: Codable, Sendable, Hashable {
    public var credential: Credential
    /// `hrp_…`: hand it to the person's app (a `TokenProvider` answers with it).
    public var secret: String
}
