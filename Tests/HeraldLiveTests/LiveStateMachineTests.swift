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
        #expect(!machine.closed(one).lastOfPerson)
        #expect(machine.closed(two).lastOfPerson)
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
        #expect(machine.stop() == [id])
        _ = machine.closed(id)
        #expect(machine.presenceToRecord().offline.isEmpty, "the server's leaving takes them all")
    }

    @Test func viewingAndForegroundEndOnlyWithTheLastSocketThatHeldThem() {
        var machine = Machine(settings: LiveSettings())
        let chat = UUID()
        let phone = open(&machine, alice, device: "tok-phone")
        let laptop = open(&machine, alice)
        #expect(machine.view(phone, chat) == nil)
        #expect(machine.view(laptop, chat) == nil)
        // The phone leaves the chat while the laptop still shows it: still viewed.
        #expect(machine.view(phone, nil) == nil)
        #expect(machine.view(laptop, UUID()) == chat, "nobody views it any more")
        machine.foreground(phone, true)
        let closed = machine.closed(phone)
        #expect(closed.leaveForeground == "tok-phone" && closed.stopViewing == nil && !closed.lastOfPerson)
        let last = machine.closed(laptop)
        #expect(last.lastOfPerson && last.stopViewing != nil)
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
            checks += tick.checkCredentials ? 1 : 0
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
        machine.unfollow(bobs, [carol])
        clock.advance(2)
        #expect(machine.tell([change(carol, "carol@acme.test", online: false)], followers: [:], now: clock.now()).isEmpty)
        machine.subscribe(bobs, to: [alice])
        _ = machine.closed(bobs)
        #expect(machine.tell([change(alice, "alice@acme.test", online: false)], followers: [:], now: clock.now()).isEmpty)
        #expect(machine.subscriptionsHeld.isEmpty)
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

    @Test func hiddenPresenceIsNotTold() {
        var machine = Machine(settings: LiveSettings())
        machine.heard(change(alice, "alice@acme.test", online: true, shown: false))
        machine.heard(change(bob, "bob@acme.test", online: true))
        #expect(machine.presenceToTell().map(\.person) == [bob])
        #expect(machine.presenceToTell().isEmpty)
    }
}
