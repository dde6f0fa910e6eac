import Foundation

/// A change of someone's presence, as the servers tell each other (docs/live-protocol.md,
/// "Presence"): recorded by one server, told to the sockets of every server that follow them.
public struct LivePresenceChange: Sendable, Codable, Equatable {
    public let tenant: UUID
    public let person: UUID
    public let email: String
    public let online: Bool
    public let lastSeen: Date?
    /// False: the person hides their presence; others see them offline with no time.
    public let shown: Bool

    public init(tenant: UUID, person: UUID, email: String, online: Bool, lastSeen: Date?, shown: Bool) {
        self.tenant = tenant
        self.person = person
        self.email = email
        self.online = online
        self.lastSeen = lastSeen
        self.shown = shown
    }
}
