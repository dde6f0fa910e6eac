import Foundation

/// Who may see or do what in a tenant: each rule written once, here. The store's SQL asks it
/// through the conditions it writes from these rules (HeraldStore's `AccessPolicy+SQL`, pinned
/// to them by tests), and the API, the console and the CLI ask it directly. What someone may
/// not see is not found, as if it did not exist; what they may see but not do is forbidden.
public struct AccessPolicy: Sendable, Hashable {
    /// The person asking; nil for the tenant itself (a tenant key acting as itself, or the
    /// operator at the CLI without `--as`).
    public let personID: UUID?
    public let isAdmin: Bool

    /// The policy for `person` (nil: the tenant itself).
    public init(_ person: Person?) {
        personID = person?.id
        isAdmin = person?.isAdmin ?? true
    }

    /// The policy of a person known by id and standing (nil: the tenant itself).
    public init(personID: UUID?, isAdmin: Bool) {
        self.personID = personID
        self.isAdmin = personID == nil || isAdmin
    }

    /// Admins and the tenant itself run the tenant: its people and their devices, its
    /// reminder policy, templates, statistics and the defaults of everyone's preferences;
    /// they see every activity, every notification's history and every message's trace.
    public var runsTheTenant: Bool { isAdmin }

    /// The tenant's webhook endpoints (docs/webhooks.md) tell its backend of everything that
    /// happens in it: only those who run the tenant see or change them.
    public var mayManageWebhooks: Bool { runsTheTenant }

    /// Only those who run the tenant set the defaults for everyone who set nothing.
    public var maySetTenantDefaults: Bool { runsTheTenant }

    /// The tenant's delivery statistics (volume, success, latency, paused providers).
    public var mayReadStatistics: Bool { runsTheTenant }

    /// Moving an activity along (docs/concepts.md): assigning it, approving it and sending it
    /// back are for the managers of its team and those who run the tenant — never its
    /// assignee, who asked for the approval; starting and completing it are its assignee's.
    /// - Parameters:
    ///   - isAssignee: the asker is the activity's assignee.
    ///   - role: the asker's role in the activity's team (for `assign`: the team), if any.
    public func mayAct(_ action: ActivityAction, isAssignee: Bool, role: TeamRole?) -> Bool {
        let manages = runsTheTenant || role == .manager
        switch action {
        case .assign: return manages
        case .approve, .reject: return manages && !isAssignee
        case .start, .complete: return isAssignee
        }
    }

    /// A person's profile and devices: their own, or anyone's for those who run the tenant.
    public func maySeePerson(_ id: UUID) -> Bool {
        runsTheTenant || id == personID
    }

    /// What a person chose to be pushed, and when (their modes, digest window, quiet hours):
    /// theirs alone to change; those who run the tenant set the defaults instead.
    public func mayChangePreferences(of id: UUID) -> Bool {
        id == personID
    }

    /// An activity: its assignee, the managers of its team, and those who run the tenant.
    /// - Parameter role: the asker's role in the activity's team, if any.
    public func maySeeActivity(assignee: UUID, role: TeamRole?) -> Bool {
        runsTheTenant || assignee == personID || role == .manager
    }

    /// Uploading the update token of an activity's Live Activity: the two people it starts
    /// for, each for their own phone on their own app (`LiveActivityPlan.audience`). Admins as
    /// such have no Live Activity of it.
    /// - Returns: the apps on which the asker may; empty when they may not.
    public func liveActivityApps(assignee: UUID, manager: UUID) -> [AppKind] {
        LiveActivityPlan.audience(assignee: assignee, manager: manager).filter { $0.person == personID }.map(\.app)
    }

    /// A notification in history: its recipient, the managers of its team, and those who run
    /// the tenant.
    public func maySeeNotification(recipient: UUID, role: TeamRole?) -> Bool {
        runsTheTenant || recipient == personID || role == .manager
    }

    /// A notification's words (its title and body, a digest's lines, a group's photo), for
    /// someone who may see the notification (`maySeeNotification`): seeing that it was sent
    /// (the trace) and reading what it said (the content) are two rights. Its recipient was
    /// told them; an activity's notification says nothing its viewers may not see; a
    /// conversation's (a message's preview, a group's name, a chat digest) only to those who
    /// may read that conversation's messages themselves (`mayRead`), never to a manager or an
    /// admin as such. Everyone else is shown `withheldTitle` and `withheldBody`.
    /// - Parameters:
    ///   - conversation: where the asker stands in the notification's conversation (nil: none),
    ///     or `.none` for a notification about no conversation.
    ///   - at: when what it tells of was stored (the message, or the digest's close).
    public func mayReadWords(ofNotificationTo recipient: UUID, conversation: Participation??, at: Date) -> Bool {
        guard recipient != personID, case .some(let participation) = conversation else { return true }
        return mayRead(messageStoredAt: at, participation)
    }

    /// What stands for a conversation's notification's title and body for someone who may
    /// not read its words (`mayReadWords`).
    public static let withheldTitle = "Message"
    public static let withheldBody = "a message in a conversation you are not in"

    /// Who of an event's recipients the asker sees: all of them, or only themselves.
    public func seesEveryRecipient(role: TeamRole?) -> Bool {
        runsTheTenant || role == .manager
    }

    /// Why a send failed, as the provider said it (it may name tokens and keys).
    public var maySeeFailureDetail: Bool { runsTheTenant }

    /// Where someone stands in a conversation.
    public enum Participation: Sendable, Equatable {
        /// Takes part now.
        case present
        /// Took part until then (left, or was removed).
        case left(at: Date)
    }

    /// Sending, reading, muting, viewing, adding people, leaving: those who take part now.
    public func mayTakePart(_ participation: Participation?) -> Bool {
        participation == .present
    }

    /// A conversation's message: those who take part see every one; someone who left sees
    /// what was stored until they left, and nothing after. Admins read no conversation they
    /// are not in.
    public func mayRead(messageStoredAt stored: Date, _ participation: Participation?) -> Bool {
        switch participation {
        case .present: true
        case .left(let at): stored <= at
        case nil: false
        }
    }

    /// A message's delivery trace (`why`): whoever may read it, and those who run the tenant.
    public func mayTrace(messageStoredAt stored: Date, _ participation: Participation?) -> Bool {
        runsTheTenant || mayRead(messageStoredAt: stored, participation)
    }

    /// Removing others from a group and renaming it: its creator, the managers of its team,
    /// and admins.
    public func mayModerate(creator: UUID?, role: TeamRole?) -> Bool {
        isAdmin || role == .manager || (creator != nil && creator == personID)
    }

    /// Whether someone is online and when they were last seen: themselves, and those who share
    /// a team or a conversation (taking part now) with them; not admins as such. Someone who
    /// hides their presence (`showPresence: false`) is seen offline, with no last-seen time,
    /// by everyone else.
    public func maySeePresence(of person: UUID, sharesTeamOrConversation: Bool) -> Bool {
        personID == person || sharesTeamOrConversation
    }
}
