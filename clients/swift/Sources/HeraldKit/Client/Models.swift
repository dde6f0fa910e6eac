import Foundation

// The API's objects as an app reads them (openapi/openapi.json in the Herald repository;
// docs/api.md). The sets the protocol closes today (apps, platforms, providers, device kinds
// and states, priorities, events, statuses) are `OpenEnum`s: an app switches over them, and a
// value a newer server adds decodes as `unknown(_:)` rather than failing.

/// Someone named in an object: an activity's assignee, a message's sender.
public struct PersonReference: Codable, Sendable, Hashable {
    public var id: UUID
    public var email: String
    public var name: String
}

/// A person of the tenant.
public struct Person: Codable, Sendable, Hashable {
    public var id: UUID
    public var email: String
    public var name: String
    public var locale: String?
    public var timeZone: String?
    public var isAdmin: Bool
}

/// `GET /v1/me`: who the credential acts as.
public struct Me: Codable, Sendable, Hashable {
    public struct Tenant: Codable, Sendable, Hashable {
        public var slug: String
        public var name: String
    }
    public struct Credential: Codable, Sendable, Hashable {
        public var id: UUID
        /// `person_token` or `tenant_key`.
        public var kind: String
    }
    public var tenant: Tenant
    public var credential: Credential
    public var person: Person?
    public var isAdmin: Bool
}

/// A team as objects name it.
public struct TeamReference: Codable, Sendable, Hashable {
    public var id: UUID
    public var slug: String
    public var name: String
}
