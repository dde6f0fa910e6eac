import Foundation

/// Message status from receipts, for one conversation: each of the person's own messages is
/// `sent`, then `delivered` once every other participant's apps received it, then `read` once
/// every other participant read it (docs/live-protocol.md, "Receipts and message status").
/// Pure: receipts and conversations in, changed statuses out.
public struct StatusBook: Sendable, Equatable {
    public struct Change: Sendable, Equatable {
        public var message: UUID
        public var sequence: Int64
        public var status: MessageStatus
    }

    /// The person whose messages these are (email, as frames name people).
    public let me: String
    /// The other participants, once the conversation is known.
    public private(set) var others: Set<String>?
    private var received: [String: Int64] = [:]
    private var read: [String: Int64] = [:]
    /// The person's own messages, by sequence, with the status last told.
    private var mine: [Int64: (id: UUID, status: MessageStatus)] = [:]
    /// How many of the person's own messages are followed: the latest.
    public static let kept = 500

    public init(me: String) { self.me = me.lowercased() }

    public static func == (left: StatusBook, right: StatusBook) -> Bool {
        left.me == right.me && left.others == right.others && left.received == right.received && left.read == right.read
            && left.mine.mapValues(\.status) == right.mine.mapValues(\.status)
    }

    /// The status of a message of the person's at `sequence`, as the receipts say now.
    public func status(of sequence: Int64) -> MessageStatus {
        guard let others, !others.isEmpty else { return .sent }
        if others.allSatisfy({ (read[$0] ?? 0) >= sequence }) { return .read }
        if others.allSatisfy({ max(received[$0] ?? 0, read[$0] ?? 0) >= sequence }) { return .delivered }
        return .sent
    }

    /// A message was stored: if it is the person's, it is followed from now on.
    public mutating func record(_ message: Message) -> [Change] {
        guard message.sender.email.lowercased() == me, !message.isSystem else { return [] }
        mine[message.sequence] = (message.id, .pending)
        if mine.count > Self.kept, let oldest = mine.keys.min() { mine[oldest] = nil }
        return changes()
    }

    /// Messages loaded over REST (`messages(in:receipts: true)`): the person's own are followed
    /// from the status the page gave them, so that receipts that come later move their ticks
    /// (a message already followed keeps the further of the two).
    public mutating func record(loaded messages: [Message]) -> [Change] {
        for message in messages where message.sender.email.lowercased() == me && !message.isSystem {
            let told = max(message.status ?? .pending, mine[message.sequence]?.status ?? .pending)
            mine[message.sequence] = (message.id, told)
        }
        while mine.count > Self.kept, let oldest = mine.keys.min() { mine[oldest] = nil }
        return changes()
    }

    public mutating func apply(_ receipt: Receipt) -> [Change] {
        let person = receipt.person.lowercased()
        if let value = receipt.received { received[person] = max(received[person] ?? 0, value) }
        if let value = receipt.read { read[person] = max(read[person] ?? 0, value) }
        return changes()
    }

    /// The conversation as loaded or changed: who the others are, and their receipts so far.
    public mutating func apply(_ conversation: Conversation) -> [Change] {
        var people = Set<String>()
        for participant in conversation.participants {
            let email = participant.person.email.lowercased()
            guard email != me else { continue }
            people.insert(email)
            received[email] = max(received[email] ?? 0, participant.lastReceivedSequence)
            read[email] = max(read[email] ?? 0, participant.lastReadSequence)
        }
        others = people
        return changes()
    }

    /// Statuses that moved on since they were last told, each step (they never go back).
    private mutating func changes() -> [Change] {
        guard others != nil else { return [] }
        var result: [Change] = []
        for (sequence, entry) in mine.sorted(by: { $0.key < $1.key }) {
            let now = status(of: sequence)
            guard now > entry.status else { continue }
            mine[sequence] = (entry.id, now)
            // Every step, in order: an app that draws ticks never skips one.
            for step in [MessageStatus.sent, .delivered, .read] where step > entry.status && step <= now {
                result.append(Change(message: entry.id, sequence: sequence, status: step))
            }
        }
        return result
    }
}
