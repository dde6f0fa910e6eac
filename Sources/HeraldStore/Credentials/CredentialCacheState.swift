import Foundation

/// What a `CredentialCache` holds and when it may answer from it, as a value (no clock, no
/// database): entries by the SHA-256 of the presented secret, each until its time to live or
/// the credential's own expiry, whichever comes first; dropped by tenant when a change is
/// heard; nothing kept while nobody listens for changes (docs/api.md#credentials).
struct CredentialCacheState {
    /// Whether changes can be heard.
    enum Listening: Equatable {
        /// No listener runs: nothing is cached (revocation takes effect on the next request).
        case off
        /// The listener is connected: an entry lives its time to live unless a change drops it.
        case connected
        /// The listener runs but its connection is away: entries live their time to live only.
        case away
    }

    struct Entry {
        let authentication: Authentication
        /// Uptime in seconds after which the entry is not used.
        let until: Double
    }

    private(set) var listening = Listening.off
    private(set) var entries: [Data: Entry] = [:]
    /// Counts the drops: an answer read from the database before a drop is not kept after it.
    private(set) var generation = 0
    /// How many entries at most (the oldest are not evicted; a full cache keeps no more).
    let capacity: Int
    /// When full: the uptime before which no entry runs out, so no sweep can make room (each
    /// miss of a full cache swept the whole table before).
    private(set) var fullUntil: Double?

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The cached answer for `key` at `now`, if any (an expired one is removed).
    mutating func lookup(_ key: Data, now: Double) -> Authentication? {
        guard listening != .off, let entry = entries[key] else { return nil }
        guard now < entry.until else {
            entries[key] = nil
            fullUntil = nil
            return nil
        }
        return entry.authentication
    }

    /// Keeps `authentication`, read from the database when the generation was `readAt`, until
    /// `now + timeToLive` or `expiresIn` seconds from now, whichever is sooner; not when a
    /// change was heard since the read (it may be what the read missed), nor when off.
    mutating func keep(
        _ authentication: Authentication, for key: Data, readAt: Int, now: Double, timeToLive: Double, expiresIn: Double?
    ) {
        guard listening != .off, readAt == generation else { return }
        let until = now + min(timeToLive, max(0, expiresIn ?? timeToLive))
        guard until > now else { return }
        if entries.count >= capacity {
            if let fullUntil, now < fullUntil { return }
            entries = entries.filter { $0.value.until > now }
            guard entries.count < capacity else {
                fullUntil = entries.values.lazy.map(\.until).min()
                return
            }
            fullUntil = nil
        }
        entries[key] = Entry(authentication: authentication, until: until)
    }

    /// A change in `tenant`'s credentials, people or name was heard: its entries go.
    mutating func changed(tenant: UUID) {
        generation += 1
        entries = entries.filter { $0.value.authentication.tenant.id != tenant }
        fullUntil = nil
    }

    /// The listener's connection state changed. Every entry goes when it connects again (what
    /// was said while it was away is lost) and when it stops.
    mutating func listen(_ state: Listening) {
        if state != .away {
            generation += 1
            entries = [:]
            fullUntil = nil
        }
        listening = state
    }
}
