import Foundation

/// What a person did with one item of their inbox, each with when and on which device: `seen`
/// (shown in a list), `read` (opened in the app, from its push, or marked), `interacted` (an
/// action taken from it, such as approving from the push), `archived` (hidden from the default
/// list), and `delivered` (the app said its push arrived). A pure value: the store keeps it, the
/// API and the live channel change it through `apply` and `opened`, and each answers the
/// engagement events that happened, for history, webhooks and metrics.
public struct InboxEngagement: Sendable, Equatable, Codable {
    /// When, and from which device (nil: not said, or marked from a list on no device).
    public struct Mark: Sendable, Equatable, Codable {
        public let at: Date
        public let device: UUID?

        public init(at: Date, device: UUID?) {
            self.at = at
            self.device = device
        }

        /// JSON names: identifiers end in `Id`, as everywhere in the API.
        enum CodingKeys: String, CodingKey {
            case at
            case device = "deviceId"
        }
    }

    /// A change a person asks for, on one item or many.
    public enum Change: String, Sendable, CaseIterable, Codable {
        case seen, read, archive, unseen, unread, unarchive

        /// What the items are once changed, as the `inbox.status` frame says it.
        public var status: Status {
            switch self {
            case .seen: .seen
            case .read: .read
            case .archive: .archived
            case .unseen: .unseen
            case .unread: .unread
            case .unarchive: .unarchived
            }
        }
    }

    /// What items became (the `inbox.status` frame's `status`).
    public enum Status: String, Sendable, CaseIterable, Codable {
        case seen, read, archived, unseen, unread, unarchived
    }

    /// What happened, once each time it happens.
    public enum Event: String, Sendable, CaseIterable, Codable {
        case seen, read, opened, interacted, archived, delivered

        /// Those the tenant's webhooks are told of (`notification.seen`, …); a push's arrival
        /// is kept in history only.
        public static let told: [Event] = [.seen, .read, .opened, .interacted, .archived]
    }

    public private(set) var seen: Mark?
    public private(set) var read: Mark?
    public private(set) var interacted: Mark?
    public private(set) var archived: Mark?
    /// The first time its push was opened (a tap), and what action it was opened with, if any.
    public private(set) var opened: Mark?
    public private(set) var action: String?
    public private(set) var delivered: Mark?

    public init() {}

    /// As the store kept it.
    public init(
        seen: Mark?, read: Mark?, interacted: Mark?, action: String?, archived: Mark?, opened: Mark?, delivered: Mark?
    ) {
        self.seen = seen
        self.read = read
        self.interacted = interacted
        self.action = action
        self.archived = archived
        self.opened = opened
        self.delivered = delivered
    }

    /// Counted in the badge and as unread: neither read nor archived (archiving hides it).
    public var isUnread: Bool { read == nil && archived == nil }
    /// Counted as new in a list: not seen yet.
    public var isUnseen: Bool { seen == nil }
    /// Whether a list shows it as it shows `other`: seen, read and archived alike (what the
    /// `inbox.status` frame tells of; a push's arrival changes none of them).
    public func listsAs(_ other: InboxEngagement) -> Bool {
        seen == other.seen && read == other.read && archived == other.archived
    }

    /// Counted as unseen in the counts: not seen, among those counted unread.
    public var isCountedUnseen: Bool { isUnread && isUnseen }

    /// Applies `change` at `at`, from `device`. Reading something marks it seen too (a read
    /// item is never "new"); marking it unseen makes it unread too. Changing what already is so
    /// keeps the first time. - Returns: the events it caused (none when nothing changed).
    @discardableResult
    public mutating func apply(_ change: Change, at: Date, device: UUID? = nil) -> [Event] {
        let mark = Mark(at: at, device: device)
        switch change {
        case .seen:
            guard seen == nil else { return [] }
            seen = mark
            return [.seen]
        case .read:
            guard read == nil else { return [] }
            var events: [Event] = []
            if seen == nil {
                seen = mark
                events.append(.seen)
            }
            read = mark
            return events + [.read]
        case .archive:
            guard archived == nil else { return [] }
            archived = mark
            return [.archived]
        case .unseen:
            guard seen != nil || read != nil else { return [] }
            seen = nil
            read = nil
            return []
        case .unread:
            guard read != nil else { return [] }
            read = nil
            return []
        case .unarchive:
            guard archived != nil else { return [] }
            archived = nil
            return []
        }
    }

    /// The app reports its push opened (the tap), with the action chosen from it if any. The
    /// first opening counts, and reads the item (and sees it); an action, the first time one is
    /// given, is `interacted`. Reported again, nothing more happens: the app may send it twice.
    @discardableResult
    public mutating func opened(at: Date, device: UUID?, action: String?) -> [Event] {
        var events: [Event] = []
        if opened == nil {
            opened = Mark(at: at, device: device)
            events.append(.opened)
        }
        if let action, interacted == nil {
            interacted = Mark(at: at, device: device)
            self.action = action
            events.append(.interacted)
        }
        return events + apply(.read, at: at, device: device)
    }

    /// The app reports the push arrived (once: the first report counts).
    @discardableResult
    public mutating func delivered(at: Date, device: UUID?) -> [Event] {
        guard delivered == nil else { return [] }
        delivered = Mark(at: at, device: device)
        return [.delivered]
    }
}
