import Foundation

/// How often one person's typing in one conversation is told: once every `interval` at most,
/// however many `typing` frames their apps send (an app sends one a keystroke; ten sockets
/// of one person sent 990 in 4 s, each relayed in a transaction of its own). A pure value:
/// the caller passes the time in.
public struct TypingThrottle: Sendable {
    public struct Key: Hashable, Sendable {
        public let person: UUID
        public let conversation: UUID

        public init(person: UUID, conversation: UUID) {
            self.person = person
            self.conversation = conversation
        }
    }

    public let interval: Duration
    private var told: [Key: Date] = [:]

    public init(interval: Duration = .seconds(3)) {
        self.interval = interval
    }

    /// Whether `key`'s typing is told now; if so, it is not again before `interval` has passed.
    public mutating func admit(_ key: Key, at now: Date) -> Bool {
        let interval = interval.timeInterval
        if let last = told[key], now.timeIntervalSince(last) < interval { return false }
        // Forget what no longer holds anything back, now and then (a server sees many people).
        if told.count >= 1_024 { told = told.filter { now.timeIntervalSince($0.value) < interval } }
        told[key] = now
        return true
    }
}
