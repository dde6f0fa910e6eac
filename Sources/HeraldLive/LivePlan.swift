import Foundation
import HeraldCore

/// What an accepted upgrade request carries to its socket: whom it speaks for, and where in the
/// feed it starts.
public struct LivePlan: Sendable {
    public let tenant: Tenant
    public let person: Person
    public let credentialID: UUID
    /// What kind of credential it is, for its share of requests (`LiveHub.requestBudget`).
    public let credentialKind: CredentialKind
    /// The console session it was opened in (`/console/live`): signing out closes it.
    public let consoleSession: UUID?
    /// The cursor the app resumes from, if any.
    public let after: Int64?
    /// The push token of the phone it is for (`device=`), if any.
    public let device: String?
    /// The feed's newest position and its pruned horizon when the upgrade was accepted.
    public let head: Int64
    public let horizon: Int64

    public init(
        tenant: Tenant, person: Person, credentialID: UUID, credentialKind: CredentialKind = .personToken, consoleSession: UUID? = nil,
        after: Int64?, device: String?, head: Int64, horizon: Int64
    ) {
        self.tenant = tenant
        self.person = person
        self.credentialID = credentialID
        self.credentialKind = credentialKind
        self.consoleSession = consoleSession
        self.after = after
        self.device = device
        self.head = head
        self.horizon = horizon
    }

    /// Where the socket starts: from its cursor when that is still kept, else from the head,
    /// told to `resync` when it named a cursor that is not kept (or not yet written).
    public var start: (position: Int64, resync: Bool) {
        guard let after else { return (head, false) }
        guard after >= horizon, after <= head else { return (head, true) }
        return (after, false)
    }
}
