import Foundation

/// Someone typing in a conversation: ephemeral, never stored, told to the servers by NOTIFY.
public struct LiveTyping: Sendable, Codable, Equatable {
    public static let channel = "herald_typing"

    public let tenant: UUID
    public let conversation: UUID
    public let person: UUID
    public let email: String
}
