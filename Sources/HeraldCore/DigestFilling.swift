import Foundation

/// Which digest each newly gathered item joins (docs/notifications.md): the open one of its key
/// (a person's app and one team or conversation), or a new one whose window opens now. A digest
/// that reaches `DigestWindow.maximumItems` is due at once and takes nothing more: the next item
/// of its key opens another. Pure: the digests open now and the items in, the assignment out.
public struct DigestFilling<Key: Hashable & Sendable>: Sendable {
    /// A digest as filling leaves it.
    public struct Digest: Sendable, Equatable {
        public let id: UUID
        public let key: Key
        public var items: Int
        public var closesAt: Date
        /// Opened by this filling (else it was open before).
        public let isNew: Bool
        /// Full: due now.
        public var isDue = false

        public init(id: UUID, key: Key, items: Int, closesAt: Date, isNew: Bool) {
            self.id = id
            self.key = key
            self.items = items
            self.closesAt = closesAt
            self.isNew = isNew
        }
    }

    /// One item to place: its key, and when a window its recipient opens now would end.
    public struct Item: Sendable {
        public let key: Key
        public let windowEnd: Date

        public init(key: Key, windowEnd: Date) {
            self.key = key
            self.windowEnd = windowEnd
        }
    }

    /// For each item, in order, the digest it joined (as it stood once the item was in).
    public private(set) var placed: [Digest] = []
    /// The digests this filling opened or added to, to be written.
    public private(set) var changed: [Digest] = []

    /// Places `items`, gathered at `now`, into the digests `open`; a new digest's id is `newID()`.
    public init(_ items: [Item], open: [Digest], now: Date, newID: () -> UUID) {
        var current = Dictionary(open.map { ($0.key, $0) }) { first, _ in first }
        var touched: [UUID: Digest] = [:]
        var order: [UUID] = []
        for item in items {
            var digest = current[item.key] ?? Digest(id: newID(), key: item.key, items: 0, closesAt: item.windowEnd, isNew: true)
            digest.items += 1
            if digest.items >= DigestWindow.maximumItems {
                digest.isDue = true
                digest.closesAt = min(digest.closesAt, now)
            }
            current[item.key] = digest.isDue ? nil : digest
            if touched[digest.id] == nil { order.append(digest.id) }
            touched[digest.id] = digest
            placed.append(digest)
        }
        changed = order.compactMap { touched[$0] }
    }
}
