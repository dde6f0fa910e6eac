import Foundation

// The API's objects as an app reads them (openapi/openapi.json in the Herald repository;
// docs/api.md). Values the server may add to later (statuses, kinds) are open string types,
// so a newer server never breaks an older app's decoding.

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

/// An open set of string values: known ones as constants, unknown ones kept as they came.
public protocol OpenValue: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible where RawValue == String {
    init(rawValue: String)
}

extension OpenValue {
    public init(from decoder: any Decoder) throws { self.init(rawValue: try decoder.singleValueContainer().decode(String.self)) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
    public var description: String { rawValue }
}
