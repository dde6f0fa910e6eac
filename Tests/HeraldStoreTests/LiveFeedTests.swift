import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The live channel's feed on a real database: who sees which row (pinned to
/// `AccessPolicy`), positions in commit order whatever order writers commit in, receipts, and
/// presence when a server dies.
@Suite struct LiveFeedTests {
    static let people = ["root@acme.test", "alice@acme.test", "chidi@acme.test", "dana@acme.test", "erin@acme.test"]

    @Test func feedRowsAreSeenExactlyByWhomThePolicyAllows() async throws {
        try await TestDatabase.withStore { store, _ in
            let (acme, group) = try await ChatAccessTests.crew(store)
            let before = try await acme.run {
                try await $0.sendMessage(actor: "alice@acme.test", conversation: group, text: "before", clientID: nil, sentAt: nil).message
            }
            _ = try await acme.run {
                try await $0.changeConversation(actor: "chidi@acme.test", conversation: group, .remove(email: "dana@acme.test"))
            }
            let after = try await acme.run {
                try await $0.sendMessage(actor: "chidi@acme.test", conversation: group, text: "after", clientID: nil, sentAt: nil).message
            }
            let activity = try await acme.assign(to: "chidi@acme.test")
            try await store.sequenceLive()
            let head = try await store.liveHead()
            // Without readers: every row's whole audience, the same rows each reader gets alone.
            let everyone = try await acme.run { try await $0.liveRows(for: nil, after: 0, through: head, limit: 10_000) }
            for email in Self.people {
                let (viewer, participation, role) = try await acme.run { session in
                    let person = try await session.person(email: email)
                    return (
                        person, try await session.participation(of: person, in: group), try await session.role(of: person.id, in: activity.team.id)
                    )
                }
                let rows = try await acme.run { try await $0.liveRows(for: [viewer], after: 0, through: head) }
                let policy = AccessPolicy(viewer)
                for message in [before, after] {
                    let seen = rows.contains { if case .message(_, let m) = $0.payload { m.id == message.id } else { false } }
                    #expect(seen == policy.mayRead(messageStoredAt: message.storedAt, participation), "\(email), \"\(message.text)\"")
                }
                let seesActivity = rows.contains { if case .activity(let change) = $0.payload { change.activity.id == activity.id } else { false } }
                #expect(seesActivity == policy.maySeeActivity(assignee: activity.assignee.id, role: role), "\(email), the activity")
                #expect(rows.allSatisfy { $0.reader == viewer.id })
                let inAudiences = everyone.filter { $0.reader == viewer.id }.map(\.position)
                #expect(inAudiences == rows.map(\.position), "the audiences agree with the reader's own rows")
            }
            // Another tenant's people see none of it.
            let other = try await WorkflowFixture.make(store, slug: "other")
            let stranger = try await other.run { try await $0.person(email: "chidi@acme.test") }
            #expect(try await other.run { try await $0.liveRows(for: [stranger], after: 0, through: head) }.isEmpty)
        }
    }

    /// The sequencer NOTIFYs the feed from the statement that moves the rows, and only when it
    /// moved some. Notifications arrive in commit order, so a run that moved nothing and still
    /// notified would show as a `feed` before the next write's `pending`.
    @Test func theSequencerTellsTheFeedOnlyWhenItMovedRows() async throws {
        try await TestDatabase.withStore { store, _ in
            let (acme, group) = try await ChatAccessTests.crew(store)
            try await store.sequenceLive()
            let listener = LiveListener(store: store, logger: testLogger)
            defer { listener.stop() }
            var events = listener.events.makeAsyncIterator()
            while let event = await events.next(), event != .connected(reconnected: false) {}
            #expect(try await store.sequenceLive() == 0)
            _ = try await acme.run {
                try await $0.sendMessage(actor: "alice@acme.test", conversation: group, text: "told", clientID: nil, sentAt: nil)
            }
            #expect(try await store.sequenceLive() == 1)
            var seen: [LiveListener.Event] = []
            while let event = await events.next() {
                seen.append(event)
                if event == .feed { break }
            }
            #expect(seen == [.pending, .feed])
        }
    }

    @Test func positionsFollowCommitOrderWhateverOrderWritersCommitIn() async throws {
        try await TestDatabase.withStore { store, _ in
            // One floor across the rounds, as a server keeps: it rises past rows moved, never
            // past the slow writer's.
            let floor = QueueFloor()
            let (acme, group) = try await ChatAccessTests.crew(store)
            let chidi = try await acme.run { try await $0.person(email: "chidi@acme.test") }
            try await store.sequenceLive(floor: floor)
            let start = try await store.liveHead()
            // A writer that has written its message and not yet committed…
            let (written, wrote) = AsyncStream.makeStream(of: Void.self)
            let (release, released) = AsyncStream.makeStream(of: Void.self)
            let slow = Task {
                try await acme.run { session in
                    _ = try await session.sendMessage(actor: "alice@acme.test", conversation: group, text: "slow", clientID: nil, sentAt: nil)
                    wrote.yield()
                    for await _ in release { break }
                }
            }
            for await _ in written { break }
            // …while a later one commits and is numbered.
            _ = try await acme.run {
                try await $0.sendMessage(actor: "dana@acme.test", conversation: group, text: "fast", clientID: nil, sentAt: nil)
            }
            for _ in 0..<5 { try await store.sequenceLive(floor: floor) }
            let middle = try await store.liveHead()
            let early = try await acme.run { try await $0.liveRows(for: [chidi], after: start, through: middle) }
            #expect(Self.texts(early) == ["fast"])
            released.yield()
            try await slow.value
            try await store.sequenceLive(floor: floor)
            let end = try await store.liveHead()
            // A reader that went on from `middle` gets the slow one: numbered after, not lost below.
            let late = try await acme.run { try await $0.liveRows(for: [chidi], after: middle, through: end) }
            #expect(Self.texts(late) == ["slow"])
        }
    }

    @Test func receiptsMoveForwardOnlyAndAreToldToTheSenderOrTheOthers() async throws {
        try await TestDatabase.withStore { store, _ in
            let (acme, group) = try await ChatAccessTests.crew(store)
            let message = try await acme.run {
                try await $0.sendMessage(actor: "alice@acme.test", conversation: group, text: "one", clientID: nil, sentAt: nil).message
            }
            let (chidi, dana) = try await acme.run { (try await $0.person(email: "chidi@acme.test"), try await $0.person(email: "dana@acme.test")) }
            try await store.sequenceLive()
            let start = try await store.liveHead()
            try await acme.run { $0.markReceived([(chidi.id, group, message.sequence)]) }
            // Again, and lower: nothing moves, nothing is told.
            try await acme.run { $0.markReceived([(chidi.id, group, message.sequence), (chidi.id, group, message.sequence - 1)]) }
            _ = try await acme.run { try await $0.changeConversation(actor: "chidi@acme.test", conversation: group, .readUpTo(message.sequence)) }
            try await store.sequenceLive()
            let end = try await store.liveHead()
            func receipts(_ person: Person) async throws -> [LiveReceipt] {
                try await acme.run { try await $0.liveRows(for: [person], after: start, through: end) }
                    .flatMap { row -> [LiveReceipt] in
                        switch row.payload {
                        case .receipt(_, let receipt): [receipt]
                        case .deliveryReceipts(_, let receipts): receipts
                        default: []
                        }
                    }
            }
            let received = LiveReceipt(person: "chidi@acme.test", received: message.sequence, read: 0)
            let read = LiveReceipt(person: "chidi@acme.test", received: message.sequence, read: message.sequence)
            // What a socket was written counts for the message's sender alone (n² frames in a
            // group otherwise); what the person says (read, received over REST) goes to everyone else.
            let alice = try await acme.run { try await $0.person(email: "alice@acme.test") }
            #expect(try await receipts(alice) == [received, read])
            #expect(try await receipts(dana) == [read])
            let toChidi = try await acme.run { try await $0.liveRows(for: [chidi], after: start, through: end) }
            #expect(toChidi.isEmpty, "a receipt went back to its own person")
            let (_, messages) = try await acme.run { try await $0.conversationDetail(viewer: "alice@acme.test", conversation: group, receipts: true) }
            let stored = try #require(messages.first { $0.id == message.id })
            #expect(stored.receivedBy == ["chidi@acme.test"])
            #expect(stored.readBy == ["chidi@acme.test"])
            #expect(stored.status == .sent, "dana has not received it")
        }
    }

    @Test func aServerThatStopsStampingTakesItsPeopleOffline() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            let chidi = try await acme.run { try await $0.person(email: "chidi@acme.test") }
            let (dead, alive) = (UUID.v7(), UUID.v7())
            try await store.stampLiveServer(dead)
            try await store.whileLiveServerRuns(alive) {
                let key = LivePersonKey(tenant: acme.tenant.id, person: chidi.id)
                #expect(try await store.liveRecordPresence(server: dead, online: [key], offline: []).map(\.online) == [true])
                #expect(try await store.liveRecordPresence(server: alive, online: [key], offline: []).isEmpty, "online already")
                let alice = try await acme.run { try await $0.person(email: "alice@acme.test") }
                #expect(try await acme.run { try await $0.presence(of: "chidi@acme.test", viewer: alice) }.online)
                try await store.pool.query("UPDATE live_servers SET seen_at = now() - interval '1 minute' WHERE id = \(dead)")
                #expect(try await store.reapLiveServers().isEmpty, "still online on the other server")
                #expect(try await store.liveRecordPresence(server: alive, online: [], offline: [key]).map(\.online) == [false])
                let presence = try await acme.run { try await $0.presence(of: "chidi@acme.test", viewer: alice) }
                #expect(!presence.online)
                #expect(presence.lastSeen != nil)
                // Hidden: offline to others, with no time; themselves still see theirs.
                try await acme.run { try await $0.setShowPresence(false, for: chidi) }
                #expect(
                    try await acme.run { try await $0.presence(of: "chidi@acme.test", viewer: alice) } == PresenceRecord(online: false, lastSeen: nil)
                )
                #expect(try await acme.run { try await $0.presence(of: "chidi@acme.test", viewer: chidi) }.lastSeen != nil)
            }
        }
    }

    @Test func presenceIsRecordedForManyPeopleAtOnceAndToldToTheirAudiences() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            let emails = ["alice@acme.test", "chidi@acme.test", "dana@acme.test", "erin@acme.test"]
            var people: [String: Person] = [:]
            for email in emails { people[email] = try await acme.run { try await $0.person(email: email) } }
            let ids = emails.compactMap { people[$0]?.id }
            let keys = ids.map { LivePersonKey(tenant: acme.tenant.id, person: $0) }
            let server = UUID.v7()
            try await store.stampLiveServer(server)
            let online = try await store.liveRecordPresence(server: server, online: keys, offline: [])
            #expect(Set(online.map(\.person)) == Set(ids) && online.allSatisfy(\.online))
            #expect(try await store.liveRecordPresence(server: server, online: keys, offline: []).isEmpty, "recorded already")
            let offline = try await store.liveRecordPresence(server: server, online: [], offline: Array(keys.prefix(2)))
            #expect(Set(offline.map(\.person)) == Set(ids.prefix(2)) && offline.allSatisfy { !$0.online && $0.lastSeen != nil })
            // Each pair, the batch lookup and the one-person lookup agree on who may see whom.
            var pairs: [(subscriber: UUID, person: UUID)] = []
            for reader in ids { for subject in ids { pairs.append((reader, subject)) } }
            let visible = try await acme.run { try await $0.presenceVisible(pairs) }
            for subject in emails {
                for reader in emails where reader != subject {
                    let viewer = try #require(people[reader])
                    let one: Bool
                    do {
                        _ = try await acme.run { try await $0.presence(of: subject, viewer: viewer) }
                        one = true
                    } catch let error as StoreError where error.code == .notFound {
                        one = false
                    }
                    let subjectID = try #require(people[subject]).id
                    #expect(visible.contains(PresencePair(subscriber: viewer.id, person: subjectID)) == one, "\(reader) seeing \(subject)")
                    let batch = try await acme.run { try await $0.presence(of: [subject, subjectID.uuidString], viewer: viewer) }
                    #expect(batch.people.map(\.person) == (one ? [subjectID] : []), "\(reader) seeing \(subject), by email and by id once")
                    #expect(batch.unknown == (one ? [] : [subject, subjectID.uuidString]))
                }
            }
            #expect(visible.contains { $0.subscriber != $0.person }, "the fixture's people share teams")
        }
    }

    /// Who follows whom by conversation: the other participants of conversations of at most
    /// `PresenceFollowing.smallConversation` people, whatever the teams; nobody through a larger one.
    @Test func peopleFollowEachOtherOnlyInSmallConversations() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            var everyone: [UUID] = []
            for email in ["alice@acme.test", "chidi@acme.test", "dana@acme.test", "erin@acme.test"] {
                everyone.append(try await acme.run { try await $0.person(email: email) }.id)
            }
            let (alice, chidi, dana, erin) = (everyone[0], everyone[1], everyone[2], everyone[3])
            #expect(try await acme.run { try await $0.presenceFollowers(of: everyone) }.isEmpty, "a team alone follows nobody")
            _ = try await acme.run {
                try await $0.createConversation(actor: "alice@acme.test", with: ["chidi@acme.test"], name: nil, photoURL: nil, team: nil)
            }
            var extra: [String] = []
            try await acme.run { session in
                for n in 1...98 {
                    let email = "extra\(n)@acme.test"
                    _ = try await session.addPerson(email: email, name: "Extra \(n)")
                    _ = try await session.setMembership(team: "ops", email: email, role: .member)
                    extra.append(email)
                }
            }
            // 101 people: too many to follow each other.
            let allHands = try await acme.run {
                try await $0.createConversation(
                    actor: "dana@acme.test", with: ["alice@acme.test", "chidi@acme.test"] + extra, name: "All hands", photoURL: nil, team: "ops")
            }
            var followers = try await acme.run { try await $0.presenceFollowers(of: everyone) }
            #expect(Set(followers[alice] ?? []) == [chidi] && Set(followers[chidi] ?? []) == [alice] && followers[dana] == nil)
            #expect(followers[erin] == nil, "in no conversation")
            // One person fewer: 100 follow each other.
            _ = try await acme.run {
                try await $0.changeConversation(actor: "extra1@acme.test", conversation: allHands.id, .leave)
            }
            followers = try await acme.run { try await $0.presenceFollowers(of: everyone) }
            #expect(
                Set(followers[alice] ?? []).intersection(everyone) == [chidi, dana] && followers[alice]?.count == 2 + 97,
                "chidi, dana and the 97 extras still there")
            #expect(Set(followers[dana] ?? []).intersection(everyone) == [alice, chidi])
        }
    }

    static func texts(_ rows: [LiveRow]) -> [String] {
        rows.compactMap { row in if case .message(_, let message) = row.payload, !message.isSystem { message.text } else { nil } }
    }
}
