import Foundation

/// An organisation; everything else belongs to exactly one.
public struct Tenant: Sendable, Codable, Equatable {
    public let id: UUID
    public let slug: String
    public let name: String
    public let createdAt: Date

    public init(id: UUID, slug: String, name: String, createdAt: Date) {
        self.id = id
        self.slug = slug
        self.name = name
        self.createdAt = createdAt
    }
}

/// A person (user) of a tenant.
public struct Person: Sendable, Codable, Equatable {
    public let id: UUID
    public let email: String
    public let name: String
    public let locale: String
    public let timeZone: String
    public let isAdmin: Bool
    public let createdAt: Date

    public init(id: UUID, email: String, name: String, locale: String, timeZone: String, isAdmin: Bool, createdAt: Date) {
        self.id = id
        self.email = email
        self.name = name
        self.locale = locale
        self.timeZone = timeZone
        self.isAdmin = isAdmin
        self.createdAt = createdAt
    }

    public var reference: PersonReference { PersonReference(id: id, email: email, name: name) }
}

/// Who someone is, as other records show them.
public struct PersonReference: Sendable, Codable, Equatable {
    public let id: UUID
    public let email: String
    public let name: String

    public init(id: UUID, email: String, name: String) {
        self.id = id
        self.email = email
        self.name = name
    }
}

/// A group of people inside a tenant.
public struct Team: Sendable, Codable, Equatable {
    public let id: UUID
    public let slug: String
    public let name: String
    public let createdAt: Date

    public init(id: UUID, slug: String, name: String, createdAt: Date) {
        self.id = id
        self.slug = slug
        self.name = name
        self.createdAt = createdAt
    }
}

/// A person's role in a team.
public struct Membership: Sendable, Codable, Equatable {
    public let team: String
    public let person: PersonReference
    public let role: TeamRole

    public init(team: String, person: PersonReference, role: TeamRole) {
        self.team = team
        self.person = person
        self.role = role
    }
}
