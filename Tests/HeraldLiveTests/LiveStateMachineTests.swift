import Foundation
import HeraldCore
import HeraldStore
import HeraldTesting
import Testing

@testable import HeraldLive

/// The live hub's decisions, without a connection or a database: the machine hands back
/// whatever it was given for a socket (here, its id).
@Suite struct LiveStateMachineTests {
    typealias Machine = LiveStateMachine<UInt64>

    let acme = Tenant(id: UUID(), slug: "acme", name: "Acme", createdAt: Date(timeIntervalSince1970: 0))
    let globex = Tenant(id: UUID(), slug: "globex", name: "Globex", createdAt: Date(timeIntervalSince1970: 0))
    let alice = UUID()
    let bob = UUID()
    let carol = UUID()

    /// Opens a socket of `person` and returns its id.
    func open(_ machine: inout Machine, _ person: UUID, tenant: Tenant? = nil, device: String? = nil) -> UInt64 {
        let id = machine.nextID()
        _ = machine.opened(id, id, tenant: tenant ?? acme, person: person, device: device)
        return id
    }

    func change(_ person: UUID, _ email: String, online: Bool, shown: Bool = true, tenant: Tenant? = nil) -> LivePresenceChange {
        LivePresenceChange(tenant: (tenant ?? acme).id, person: person, email: email, online: online, lastSeen: nil, shown: shown)
    }

    @Test func aServerOrAPersonFullRefusesTheNextSocket() {
        var machine = Machine(settings: LiveSettings(perPerson: 2, perServer: 3))
        #expect(machine.admission(of: alice) == .admitted)
        _ = open(&machine, alice)
        _ = open(&machine, alice)
        #expect(machine.admission(of: alice) == .personFull(limit: 2))
        #expect(machine.admission(of: bob) == .admitted)
        _ = open(&machine, bob)
        #expect(machine.admission(of: carol) == .serverFull)
        var stopping = Machine(settings: LiveSettings())
        _ = stopping.stop()
        #expect(stopping.admission(of: carol) == .serverFull, "a stopping server takes nobody")
    }

    /// A socket that opens while a round is under way is not that round's: it catches up in
    /// the next from its own cursor, and only then takes the rounds' frames.
    @Test func aSocketJoiningMidRoundCatchesUpInTheNext() throws {
        var machine = Machine(settings: LiveSettings())
        machine.start(at: 10)
        let none = machine.round()
        #expect(none == nil, "no socket, no round")
        let first = open(&machine, alice)
        let round1Taken = machine.round()
        let round1 = try #require(round1Taken)
        #expect(round1.cursor == 10 && round1.joining == [first] && round1.joined.isEmpty)
        // Opens while round 1 reads the feed up to 15.
        let late = open(&machine, bob)
        machine.roundEnded(head: 15, caughtUp: round1.joining)
        let round2Taken = machine.round()
        let round2 = try #require(round2Taken)
        #expect(round2.cursor == 15, "the seam: the next round reads after what the last gave")
        #expect(round2.joining == [late], "caught up from its own cursor, not given round 2's rows twice")
        #expect(round2.joined[acme.id]?.people[alice] == [first])
        #expect(round2.joined[acme.id]?.people[bob] == nil)
        machine.roundEnded(head: 20, caughtUp: round2.joining)
        let round3Taken = machine.round()
        let round3 = try #require(round3Taken)
        #expect(round3.cursor == 20 && round3.joining.isEmpty)
        #expect(Set(round3.joined[acme.id]?.people.keys.map { $0 } ?? []) == [alice, bob])
    }

    /// The cursor never goes back, and a socket that closed during its catch-up is not joined.
    @Test func theCursorOnlyMovesForwardAndClosedSocketsStayGone() throws {
        var machine = Machine(settings: LiveSettings())
        machine.start(at: 30)
        let id = open(&machine, alice)
        let roundTaken = machine.round()
        let round = try #require(roundTaken)
        _ = machine.closed(id)
        machine.roundEnded(head: 25, caughtUp: round.joining)
        #expect(machine.cursor == 30)
        let after = machine.round()
        #expect(after == nil)
    }

    @Test func theFirstAndLastSocketOfAPersonAreRecordedOnlyWhenTheyChangeSomething() {
        var machine = Machine(settings: LiveSettings())
        let key = LivePersonKey(tenant: acme.id, person: alice)
        let one = open(&machine, alice)
        let two = open(&machine, alice)
        var due = machine.presenceToRecord()
        #expect(due.online == [key] && due.offline.isEmpty)
        machine.presenceRecorded(online: due.online, offline: due.offline)
        // One of two closes: still online. The last closes and one comes back before the
        // recording runs: nothing to record.
        #expect(!machine.closed(one).recordsPresence)
        #expect(machine.closed(two).recordsPresence)
        _ = open(&machine, alice)
        due = machine.presenceToRecord()
        #expect(due.online.isEmpty && due.offline.isEmpty)
    }

    @Test func aRecordingThatFailedIsTriedAgain() {
        var machine = Machine(settings: LiveSettings())
        let key = LivePersonKey(tenant: acme.id, person: alice)
        _ = open(&machine, alice)
        let due = machine.presenceToRecord()
        machine.presenceNotRecorded(online: due.online, offline: due.offline)
        #expect(machine.presenceToRecord().online == [key], "the failed one again")
        machine.presenceRecorded(online: [key], offline: [])
        #expect(machine.presenceToRecord().online.isEmpty)
    }

    @Test func whileStoppingNobodyIsRecordedOfflineOneByOne() {
        var machine = Machine(settings: LiveSettings())
        let id = open(&machine, alice)
        let due = machine.presenceToRecord()
        machine.presenceRecorded(online: due.online, offline: due.offline)
        #expect(machine.stop().closing == [id])
        _ = machine.closed(id)
        #expect(machine.presenceToRecord().offline.isEmpty, "the server's leaving takes them all")
    }

    @Test func viewingAndForegroundEndOnlyWithTheLastSocketThatHeldThem() {
        var machine = Machine(settings: LiveSettings())
        let chat = UUID()
        let phone = open(&machine, alice, device: "tok-phone")
        let laptop = open(&machine, alice)
        #expect(machine.view(phone, chat).isEmpty)
        #expect(machine.view(laptop, chat).isEmpty)
        // The phone leaves the chat while the laptop still shows it: still viewed.
        #expect(machine.view(phone, nil).isEmpty)
        #expect(machine.view(laptop, UUID()).stopViewing == chat, "nobody views it any more")
        machine.foreground(phone, true)
        let closed = machine.closed(phone)
        #expect(closed.leaveForeground == "tok-phone" && closed.stopViewing == nil && !closed.recordsPresence)
        let last = machine.closed(laptop)
        #expect(last.recordsPresence && last.stopViewing != nil)
    }

    /// The heartbeat spreads sockets over its interval, every socket once an interval; the
    /// upkeep comes every 5 seconds, the credentials every 2, memory is trimmed after churn.
    @Test func eachSecondBeatsItsShareAndDueUpkeep() {
        var machine = Machine(settings: LiveSettings(heartbeat: 3))
        let clock = ManualClock()
        let ids = (0..<9).map { _ in open(&machine, UUID()) }
        var beaten: [UInt64] = []
        var upkeeps = 0
        var checks = 0
        for _ in 1...6 {
            clock.advance(1)
            let tick = machine.second(now: clock.now())
            #expect(tick.beating.count == 3)
            beaten += tick.beating
            upkeeps += tick.upkeep ? 1 : 0
            checks += tick.credentialChecks.count
            #expect(!tick.trim)
        }
        #expect(beaten.sorted() == (ids + ids).sorted(), "each socket twice in two intervals")
        #expect(upkeeps == 1 && checks == 3)
        for _ in 0..<Machine.trimAfterChurn { _ = machine.closed(open(&machine, alice)) }
        var trims = 0
        for _ in 1...10 {
            clock.advance(1)
            trims += machine.second(now: clock.now()).trim ? 1 : 0
        }
        #expect(trims == 1, "once for the churn, not again without more")
    }

    // MARK: Presence by subscription

    /// A change goes to the sockets following the person: their small conversations' people
    /// (found in the database) and subscribers; not to the person's own sockets, nor to anyone
    /// else of the tenant, nor to another tenant.
    @Test func aChangeGoesOnlyToItsFollowers() {
        var machine = Machine(settings: LiveSettings())
        let clock = ManualClock()
        let alices = open(&machine, alice)
        let bobs = open(&machine, bob)
        let carols = open(&machine, carol)
        let stranger = open(&machine, UUID())
        let elsewhere = open(&machine, UUID(), tenant: globex)
        machine.subscribe(carols, to: [alice])
        machine.subscribe(elsewhere, to: [alice])
        let frames = machine.tell([change(alice, "alice@acme.test", online: true)], followers: [alice: [bob, alice]], now: clock.now())
        #expect(Set(frames.map(\.socket)) == [bobs, carols])
        #expect(!frames.map(\.socket).contains(alices) && !frames.map(\.socket).contains(stranger))
        #expect(frames.allSatisfy { $0.changes.map(\.email) == ["alice@acme.test"] })
    }

    /// At most one `presence` frame a second a socket: what comes in between waits for the
    /// next second, every change of it in one frame, the latest of each person.
    @Test func changesAreBatchedAtMostOneFrameASecond() {
        var machine = Machine(settings: LiveSettings())
        let clock = ManualClock()
        let bobs = open(&machine, bob)
        machine.subscribe(bobs, to: [alice, carol])
        #expect(machine.tell([change(alice, "alice@acme.test", online: true)], followers: [:], now: clock.now()).count == 1)
        clock.advance(0.3)
        #expect(machine.tell([change(carol, "carol@acme.test", online: true)], followers: [:], now: clock.now()).isEmpty)
        clock.advance(0.3)
        #expect(machine.tell([change(alice, "alice@acme.test", online: false)], followers: [:], now: clock.now()).isEmpty)
        clock.advance(0.2)
        #expect(machine.second(now: clock.now()).presence.isEmpty, "not a second since the last frame yet")
        clock.advance(0.3)
        let held = machine.second(now: clock.now()).presence
        #expect(held.count == 1 && held.first?.socket == bobs)
        #expect(held.first?.changes.map(\.email) == ["alice@acme.test", "carol@acme.test"])
        #expect(held.first?.changes.first?.online == false, "the latest change of alice")
        clock.advance(1)
        #expect(machine.second(now: clock.now()).presence.isEmpty, "nothing new")
    }

    @Test func aNewListReplacesTheLastAndAClosedSocketFollowsNobody() {
        var machine = Machine(settings: LiveSettings())
        let clock = ManualClock()
        let bobs = open(&machine, bob)
        machine.subscribe(bobs, to: [alice])
        machine.subscribe(bobs, to: [carol])
        #expect(machine.tell([change(alice, "alice@acme.test", online: true)], followers: [:], now: clock.now()).isEmpty)
        #expect(machine.tell([change(carol, "carol@acme.test", online: true)], followers: [:], now: clock.now()).count == 1)
        machine.checked(
            machine.subscriptionsToCheck(tenant: acme.id, departures: 1, departed: [carol: 1], since: 0), gone: [bobs: [carol]], departures: 1)
        clock.advance(2)
        #expect(machine.tell([change(carol, "carol@acme.test", online: false)], followers: [:], now: clock.now()).isEmpty)
        machine.subscribe(bobs, to: [alice])
        _ = machine.closed(bobs)
        #expect(machine.tell([change(alice, "alice@acme.test", online: false)], followers: [:], now: clock.now()).isEmpty)
        #expect(machine.subscribingTenants.isEmpty)
    }

    /// Subscriptions are checked again only where someone left a team or a conversation since
    /// they were found visible (the tenant's departures moved), and of a list only the people
    /// who left (all of it when its own person left); a list replaced while it was checked keeps
    /// the count its own lookup read, and is checked next time.
    @Test func onlyThePairsOfSomeoneWhoLeftAreCheckedAgain() {
        var machine = Machine(settings: LiveSettings())
        let dave = UUID()
        let bobs = open(&machine, bob)
        let carols = open(&machine, carol)
        let globexBobs = open(&machine, bob, tenant: globex)
        _ = machine.subscribed(bobs, to: [alice, carol], departures: 3)
        _ = machine.subscribed(carols, to: [alice], departures: 4)
        _ = machine.subscribed(globexBobs, to: [alice], departures: 0)
        #expect(Set(machine.subscribingTenants.map(\.id)) == [acme.id, globex.id])
        #expect(machine.oldestVerified(tenant: acme.id) == 3 && machine.oldestVerified(tenant: globex.id) == 0)
        #expect(machine.subscriptionsToCheck(tenant: globex.id, departures: 0, departed: [:], since: 0).isEmpty, "nobody left globex")
        #expect(machine.subscriptionsToCheck(tenant: acme.id, departures: 4, departed: [alice: 4], since: 3).map(\.people) == [[alice]])

        // Carol left something at 5: Bob's list checks her alone, hers is checked whole.
        let held = machine.subscriptionsToCheck(tenant: acme.id, departures: 5, departed: [carol: 5], since: 3)
        #expect(Set(held.map(\.socket)) == [bobs, carols], "\(held)")
        #expect(held.first { $0.socket == bobs }?.people == [carol] && held.first { $0.socket == carols }?.people == [alice])
        // Carol's list is replaced while it is checked; Bob lost sight of her.
        _ = machine.subscribed(carols, to: [bob], departures: 4)
        machine.checked(held, gone: [bobs: [carol]], departures: 5)
        #expect(machine.members[bobs]?.subscriptions == [alice] && machine.members[bobs]?.subscriptionsVerified == 5)
        #expect(machine.members[carols]?.subscriptions == [bob], "the new list stays whole")
        let clock = ManualClock()
        #expect(
            machine.tell([change(carol, "carol@acme.test", online: true)], followers: [:], now: clock.now()).isEmpty, "Bob no longer follows Carol")

        // Dave, whom nobody follows, leaves at 6: Bob's list has nothing to check and is found
        // visible at 6; Carol's new list was found visible before what was read (`since` 5).
        let next = machine.subscriptionsToCheck(tenant: acme.id, departures: 6, departed: [dave: 6], since: 5)
        #expect(next.map(\.socket) == [carols] && next.first?.people == [bob])
        #expect(machine.members[bobs]?.subscriptionsVerified == 6)

        // A failed lookup leaves the last list as it was, and its check.
        machine.subscribing(bobs)
        machine.notSubscribed(bobs)
        #expect(machine.members[bobs]?.subscriptions == [alice] && machine.members[bobs]?.subscriptionsVerified == 6)
    }

    /// A change heard while a subscription is looked up may be newer than what the lookup
    /// read: it is handed back to follow the answer (the latest of each person subscribed to).
    @Test func changesHeardWhileSubscribingFollowTheAnswer() {
        var machine = Machine(settings: LiveSettings())
        let clock = ManualClock()
        let bobs = open(&machine, bob)
        machine.subscribing(bobs)
        _ = machine.tell(
            [change(alice, "alice@acme.test", online: true), change(carol, "carol@acme.test", online: true)], followers: [:], now: clock.now())
        _ = machine.tell([change(alice, "alice@acme.test", online: false)], followers: [:], now: clock.now())
        let heard = machine.subscribed(bobs, to: [alice])
        #expect(heard.map(\.email) == ["alice@acme.test"] && heard.first?.online == false, "alice's latest; carol is not followed")
        #expect(machine.tell([change(alice, "alice@acme.test", online: true)], followers: [:], now: clock.now()).count == 1)
        #expect(machine.subscribed(bobs, to: [alice]).isEmpty, "nothing kept once subscribed")
    }

    /// Lookups that overlap share one list of what was heard: each gets what came after its own
    /// start, of its own tenant; the list is trimmed past what the earliest still needs, and a
    /// closed socket's lookup holds nothing back.
    @Test func overlappingLookupsEachGetWhatCameAfterTheirStart() {
        var machine = Machine(settings: LiveSettings())
        let clock = ManualClock()
        let bobs = open(&machine, bob)
        let carols = open(&machine, carol)
        let globexBobs = open(&machine, bob, tenant: globex)
        machine.subscribing(bobs)
        _ = machine.tell([change(alice, "alice@acme.test", online: true)], followers: [:], now: clock.now())
        machine.subscribing(carols)
        machine.subscribing(globexBobs)
        // More changes than are kept while a lookup is open: the earliest lookup still gets them all.
        for n in 0..<(Machine.heardTrimAt + 10) {
            _ = machine.tell([change(carol, "carol@acme.test", online: n % 2 == 0)], followers: [:], now: clock.now())
        }
        _ = machine.tell([change(alice, "alice@globex.test", online: false, tenant: globex)], followers: [:], now: clock.now())
        let carolsHeard = machine.subscribed(carols, to: [alice])
        #expect(carolsHeard.isEmpty, "alice's change came before Carol's lookup began, and the globex one is another tenant's")
        let bobsHeard = machine.subscribed(bobs, to: [alice, carol])
        #expect(bobsHeard.map(\.email) == ["alice@acme.test", "carol@acme.test"] && bobsHeard.last?.online == false)
        #expect(machine.subscribed(globexBobs, to: [alice]).map(\.email) == ["alice@globex.test"])
        // A socket that closes during its lookup leaves nothing behind.
        let again = open(&machine, bob)
        machine.subscribing(again)
        _ = machine.closed(again)
        _ = machine.tell([change(alice, "alice@acme.test", online: false)], followers: [:], now: clock.now())
        #expect(machine.subscribed(again, to: [alice]).isEmpty)
    }

    /// What lookups still open need is kept, and no more once the earliest of them ended: the
    /// changes before the next earliest go, and its lookup still gets what came after its start.
    @Test func changesNoOpenLookupNeedsAreDropped() {
        var machine = Machine(settings: LiveSettings())
        let clock = ManualClock()
        let (bobs, carols, dans) = (open(&machine, bob), open(&machine, carol), open(&machine, UUID()))
        machine.subscribing(bobs)
        for n in 0..<3_000 { _ = machine.tell([change(carol, "carol@acme.test", online: n % 2 == 0)], followers: [:], now: clock.now()) }
        machine.subscribing(carols)
        machine.subscribing(dans)
        machine.notSubscribed(dans)
        for n in 0..<2_000 { _ = machine.tell([change(alice, "alice@acme.test", online: n % 2 == 0)], followers: [:], now: clock.now()) }
        #expect(machine.heardWhileSubscribing.count == 5_000)
        _ = machine.subscribed(bobs, to: [alice])
        #expect(machine.heardWhileSubscribing.count == 2_000, "Carol's lookup began after the first 3,000")
        #expect(machine.subscribed(carols, to: [alice, carol]).map(\.email) == ["alice@acme.test"], "only what came after her start")
        #expect(machine.heardWhileSubscribing.isEmpty && machine.subscribingOrder.isEmpty)
    }

    @Test func hiddenPresenceIsNotTold() {
        var machine = Machine(settings: LiveSettings())
        _ = machine.heard(change(alice, "alice@acme.test", online: true, shown: false))
        #expect(machine.heard(change(bob, "bob@acme.test", online: true)).tellsPresence)
        #expect(machine.presenceToTell().map(\.person) == [bob])
        #expect(machine.presenceToTell().isEmpty)
    }

    // MARK: The machine's other events

    /// A person's first socket asks for their presence to be recorded, then a round (for its
    /// catch-up); another of theirs asks for the round only.
    @Test func theFirstSocketOfAPersonIsRecordedAndEverySocketCaughtUp() {
        var machine = Machine(settings: LiveSettings())
        let first = machine.nextID()
        #expect(machine.opened(first, first, tenant: acme, person: alice, device: nil).names == ["recordPresence", "round"])
        let second = machine.nextID()
        #expect(machine.opened(second, second, tenant: acme, person: alice, device: nil).names == ["round"])
    }

    /// Typing is told once every few seconds per person and conversation, whatever their sockets send.
    @Test func typingIsToldAtMostOnceEveryFewSeconds() {
        var machine = Machine(settings: LiveSettings())
        let clock = ManualClock()
        let phone = open(&machine, alice)
        let laptop = open(&machine, alice)
        let chat = UUID()
        #expect(machine.typing(phone, in: chat, now: clock.now()).names == ["announceTyping"])
        clock.advance(1)
        #expect(machine.typing(laptop, in: chat, now: clock.now()).isEmpty, "her other socket, the same conversation")
        #expect(machine.typing(laptop, in: UUID(), now: clock.now()).names == ["announceTyping"])
        clock.advance(2)
        #expect(machine.typing(laptop, in: chat, now: clock.now()).names == ["announceTyping"])
        #expect(machine.typing(99_999, in: chat, now: clock.now()).isEmpty, "a socket that is gone")
    }

    /// The credentials are checked in full first and every `fullCheckEvery` seconds (with the
    /// subscriptions again), and in between for what ended since the last check's database
    /// time, less the margin; no socket, no check.
    @Test func credentialsAreCheckedInFullFirstThenSinceTheLastCheck() throws {
        var machine = Machine(settings: LiveSettings())
        let clock = ManualClock()
        clock.advance(1)
        #expect(machine.second(now: clock.now()).credentialChecks.isEmpty)
        clock.advance(1)
        #expect(machine.second(now: clock.now()).credentialChecks.isEmpty, "no socket: nothing to check")
        _ = open(&machine, alice)
        var checks: [Date?] = []
        var rechecks = 0
        let databaseTime = Date(timeIntervalSince1970: 1_795_303_800)
        for _ in 3...(Machine.fullCheckEvery + 2) {
            clock.advance(1)
            let actions = machine.second(now: clock.now())
            checks += actions.credentialChecks
            rechecks += actions.names.filter { $0 == "recheckSubscriptions" }.count
            if !actions.credentialChecks.isEmpty { machine.credentialsChecked(at: databaseTime) }
        }
        let first = try #require(checks.first)
        #expect(first == nil, "the first check reads every credential's standing")
        #expect(checks.dropFirst().dropLast().allSatisfy { $0 == databaseTime - Machine.credentialsCheckMargin })
        let last = try #require(checks.last)
        #expect(last == nil, "every fullCheckEvery seconds, in full again")
        #expect(rechecks == 1)
    }

    /// Each second writes the held-back frames first, then beats, then asks for a round and a
    /// recording (either may have been missed); a stopping server closes every socket with 1001.
    @Test func aSecondComesInItsOrderAndAStopClosesEverySocket() {
        var machine = Machine(settings: LiveSettings(heartbeat: 1))
        let clock = ManualClock()
        let bobs = open(&machine, bob)
        machine.subscribe(bobs, to: [alice])
        _ = machine.tell([change(alice, "alice@acme.test", online: true)], followers: [:], now: clock.now())
        _ = machine.tell([change(alice, "alice@acme.test", online: false)], followers: [:], now: clock.now())
        clock.advance(1)
        #expect(machine.second(now: clock.now()).names.prefix(4) == ["presence", "beat", "round", "recordPresence"])
        let stop = machine.stop()
        guard case .close(let sockets, let code, _)? = stop.first else {
            Issue.record("\(stop)")
            return
        }
        #expect(sockets == [bobs] && code == LiveCloseCode.goingAway)
    }
}

/// What a list of the machine's actions says, for the tests.
extension [LiveAction<UInt64>] {
    var names: [String] {
        map { action in
            switch action {
            case .round: "round"
            case .recordPresence: "recordPresence"
            case .tellPresence: "tellPresence"
            case .recheckSubscriptions: "recheckSubscriptions"
            case .presence: "presence"
            case .beat: "beat"
            case .stopViewing: "stopViewing"
            case .leaveForeground: "leaveForeground"
            case .checkCredentials: "checkCredentials"
            case .announceTyping: "announceTyping"
            case .upkeep: "upkeep"
            case .trim: "trim"
            case .prune: "prune"
            case .close: "close"
            }
        }
    }

    var recordsPresence: Bool { names.contains("recordPresence") }
    var tellsPresence: Bool { names.contains("tellPresence") }
    var upkeep: Bool { names.contains("upkeep") }
    var trim: Bool { names.contains("trim") }

    var stopViewing: UUID? {
        for case .stopViewing(_, let conversation) in self { return conversation }
        return nil
    }

    var leaveForeground: String? {
        for case .leaveForeground(_, let device) in self { return device }
        return nil
    }

    var beating: [UInt64] {
        for case .beat(let sockets) in self { return sockets }
        return []
    }

    var presence: [LivePresenceFrame<UInt64>] {
        for case .presence(let frames) in self { return frames }
        return []
    }

    /// Each credentials check asked for: since when (nil: in full).
    var credentialChecks: [Date?] {
        compactMap { if case .checkCredentials(let since) = $0 { since } else { nil } }
    }

    var closing: [UInt64] {
        for case .close(let sockets, _, _) in self { return sockets }
        return []
    }
}
