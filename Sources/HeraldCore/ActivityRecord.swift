import Foundation

/// An activity as stored: what it is, who assigned it to whom, where it stands.
public struct ActivityRecord: Sendable, Codable, Equatable {
    public struct TeamReference: Sendable, Codable, Equatable {
        public let id: UUID
        public let slug: String
        public let name: String

        public init(id: UUID, slug: String, name: String) {
            self.id = id
            self.slug = slug
            self.name = name
        }
    }

    public let id: UUID
    public let team: TeamReference
    public let name: String
    public let priority: Priority
    public let deadline: LocalDate
    public let status: ActivityStatus
    public let version: Int
    public let manager: PersonReference
    public let assignee: PersonReference
    public let createdAt: Date
    public let updatedAt: Date

    public init(
        id: UUID, team: TeamReference, name: String, priority: Priority, deadline: LocalDate, status: ActivityStatus,
        version: Int, manager: PersonReference, assignee: PersonReference, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.team = team
        self.name = name
        self.priority = priority
        self.deadline = deadline
        self.status = status
        self.version = version
        self.manager = manager
        self.assignee = assignee
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// One step in an activity's life.
public struct ActivityTransitionRecord: Sendable, Codable, Equatable {
    public let action: ActivityAction
    public let from: ActivityStatus?
    public let to: ActivityStatus
    public let actor: PersonReference
    public let reason: String?
    public let at: Date

    public init(action: ActivityAction, from: ActivityStatus?, to: ActivityStatus, actor: PersonReference, reason: String?, at: Date) {
        self.action = action
        self.from = from
        self.to = to
        self.actor = actor
        self.reason = reason
        self.at = at
    }
}
