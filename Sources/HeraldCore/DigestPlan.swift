import Foundation

/// What closing a due digest does (docs/notifications.md): which of its items are still worth
/// a push, and whether it is sent now, waits out the person's quiet hours, or is not sent at
/// all because nothing is left. Pure: one function of the items' states, the person's quiet
/// hours and `now`.
public struct DigestPlan: Sendable, Equatable {
    /// Where one gathered item stands when its digest closes.
    public struct Item: Sendable, Equatable {
        /// The activity's later change of status, if it moved on since (supersede).
        public var supersededBy: String?
        /// The person has read the message (a chat item).
        public var read: Bool
        /// The person may still see it, by the access policy asked again now: its activity
        /// (`AccessPolicy.maySeeActivity`: they may have left its team, or stopped managing
        /// it) or its conversation (`mayTakePart`: they may have been removed from the group).
        public var visible: Bool

        public init(supersededBy: String? = nil, read: Bool = false, visible: Bool = true) {
            self.supersededBy = supersededBy
            self.read = read
            self.visible = visible
        }

        /// Why it leaves the digest, or nil when it stays.
        var leaving: String? {
            if !visible { return "digest: left the digest before it was sent: they may no longer see it" }
            if let later = supersededBy { return "digest: left the digest before it was sent: superseded by \(later)" }
            if read { return "digest: left the digest before it was sent: they read the message" }
            return nil
        }
    }

    public enum Outcome: Sendable, Equatable {
        /// Pushed now: the items at these positions stay in it.
        case send(kept: [Int])
        /// Every item left: nothing is pushed.
        case empty
        /// Due in quiet hours: closed again when they end (one digest, not two).
        case wait(until: Date, reason: String)
    }

    public let outcome: Outcome
    /// The items that leave it (by position), each with its reason. Empty while it waits:
    /// they are judged when it is sent.
    public let leaving: [(index: Int, reason: String)]

    public static func == (lhs: DigestPlan, rhs: DigestPlan) -> Bool {
        lhs.outcome == rhs.outcome && lhs.leaving.map(\.index) == rhs.leaving.map(\.index)
            && lhs.leaving.map(\.reason) == rhs.leaving.map(\.reason)
    }

    /// The plan for a digest of `items` due at `now`, for a person with `quietHours` on the
    /// clock of `timeZone`.
    public static func close(_ items: [Item], quietHours: QuietHours?, timeZone: String, now: Date) -> DigestPlan {
        let zone = TimeZone.named(timeZone)
        if let until = quietHours?.deferral(at: now, in: zone) {
            return DigestPlan(
                outcome: .wait(
                    until: until, reason: "quiet_hours: waits until \(DeliveryDecision.local(until, in: zone)) (\(timeZone))"),
                leaving: [])
        }
        var kept: [Int] = []
        var leaving: [(Int, String)] = []
        for (index, item) in items.enumerated() {
            if let reason = item.leaving { leaving.append((index, reason)) } else { kept.append(index) }
        }
        return DigestPlan(outcome: kept.isEmpty ? .empty : .send(kept: kept), leaving: leaving)
    }

    /// What history says of an item sent in a digest: "in the digest sent at 10:00 with 6
    /// others" (on the person's clock).
    public static func sentReason(at instant: Date, others: Int, timeZone: String) -> String {
        let zone = TimeZone.named(timeZone)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.hour, .minute], from: instant)
        let time = TimeOfDay(hour: parts.hour ?? 0, minute: parts.minute ?? 0)?.description ?? "?"
        let with = others == 0 ? "alone" : others == 1 ? "with 1 other" : "with \(others) others"
        return "digest: in the digest sent at \(time) (\(timeZone)) \(with)"
    }
}

/// Where a digest is (`digests.status`): gathering, due now (it holds the most it may), sent,
/// or closed with nothing left to send.
public enum DigestStatus: String, Sendable, CaseIterable, Codable {
    case open, due, sent, empty
}
