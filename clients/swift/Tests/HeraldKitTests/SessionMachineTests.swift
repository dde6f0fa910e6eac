import Foundation
import Testing

@testable import HeraldKit

/// The live session's decisions, with a clock moved by hand.
@Suite struct SessionMachineTests {
    let hello = ServerFrame.Hello(person: "bob@acme.test", cursor: "100", heartbeat: 15)

    @Test func retriesBackOffExponentiallyWithFullJitterUpToThirtySeconds() {
        // With jitter 1, each wait is its ceiling: 0.5, 1, 2, 4, 8, 16, 30, 30 s.
        var run = MachineRun(jitter: [1])
        run.send(.start)
        var waits: [Duration] = []
        for _ in 0..<8 {
            let start = run.now
            run.send(.unreachable(id: run.lastConnection))
            let connections = run.connects.count
            // Just before the wait ends, no new connection; at its end, one.
            let wait = run.timers.last.map { $0.at - start } ?? .zero
            run.advance(by: wait - .milliseconds(1))
            #expect(run.connects.count == connections)
            run.advance(by: .milliseconds(1))
            #expect(run.connects.count == connections + 1)
            waits.append(wait)
        }
        #expect(waits == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30)])
        // Full jitter: anywhere from 0 to the ceiling, as the random number says.
        var jittered = MachineRun(jitter: [0.25, 0, 0.5])
        jittered.send(.start)
        var delays: [Duration] = []
        for _ in 0..<3 {
            jittered.send(.unreachable(id: jittered.lastConnection))
            if case .startTimer(_, let delay)? = jittered.actions.last { delays.append(delay) }
            jittered.advance(by: .seconds(60))
        }
        #expect(delays == [.milliseconds(125), .zero, .seconds(1)])
    }

    @Test func aQuietConnectionIsPingedAfterAHeartbeatAndGivenUpAfterTwo() {
        var run = MachineRun(jitter: [1])
        run.send(.start)
        run.send(.opened(id: 1, hello))
        // Frames keep it alive: no ping while the server speaks.
        for second in 1...60 {
            run.advance(by: .seconds(1))
            if second % 5 == 0 { run.send(.frame(id: 1, .ephemeral(.badge(second)))) }
        }
        #expect(!run.sent.contains(.ping))
        // A whole heartbeat of silence: a ping; its answer keeps the connection.
        run.advance(by: .seconds(30))
        #expect(run.sent.filter { $0 == .ping }.count == 1)
        run.send(.frame(id: 1, .ephemeral(nil)))  // pong
        run.advance(by: .seconds(15))
        #expect(run.machine.state.isOpen && run.connects.count == 1)
        // Silence again, and no answer to the next ping: given up, and a new connection with the cursor.
        run.advance(by: .seconds(45))
        #expect(run.sent.filter { $0 == .ping }.count == 2)
        #expect(run.actions.contains(.close))
        #expect(run.events.contains(.connection(.waiting(retryIn: .milliseconds(500), closeCode: nil))))
        #expect(run.connects.count == 2 && run.connects.last?.after == "100")
        // The old connection's watch fires into nothing.
        run.advance(by: .seconds(60))
        #expect(run.connects.count == 2)
    }

    @Test func aConnectionThatOpenedStartsTheCountAgain() {
        var run = MachineRun(jitter: [1])
        run.send(.start)
        for _ in 0..<4 {
            run.send(.unreachable(id: run.lastConnection))
            run.advance(by: .seconds(60))
        }
        run.send(.opened(id: run.lastConnection, hello))
        run.send(.closed(id: run.lastConnection, code: 1001))
        guard case .startTimer(_, let delay)? = run.actions.last else {
            Issue.record("no timer after the close")
            return
        }
        #expect(delay == .milliseconds(500))
        #expect(run.events.last == .connection(.waiting(retryIn: .milliseconds(500), closeCode: 1001)))
    }

    @Test func theServersRetryAfterIsWaitedAtLeast() {
        var run = MachineRun(jitter: [0.1])
        run.send(.start)
        run.send(.refused(id: 1, status: 503, retryAfter: 5))
        #expect(run.timers.last?.at == .seconds(5))
        run.advance(by: .seconds(5))
        #expect(run.connects.count == 2)
    }

    @Test func theNetworkComingBackOrTheForegroundConnectsAtOnceAndTheOldTimerIsIgnored() {
        var run = MachineRun(jitter: [1])
        run.send(.start)
        for _ in 0..<5 {
            run.send(.unreachable(id: run.lastConnection))
            run.advance(by: .seconds(60))
        }
        run.send(.unreachable(id: run.lastConnection))
        #expect(run.connects.count == 6)
        run.send(.networkAvailable)
        #expect(run.connects.count == 7 && run.connects.last?.at == run.now)
        run.send(.unreachable(id: run.lastConnection))
        run.send(.foreground(true))
        #expect(run.connects.count == 8 && run.connects.last?.at == run.now)
        // The timers of the waits cut short fire into nothing.
        run.advance(by: .seconds(120))
        #expect(run.connects.count == 8)
    }

    /// A device attached later (the APNs token comes after launch): an open connection is
    /// replaced at once with the cursor, one being opened or waited for starts anew now.
    @Test func aDeviceAttachedLaterReconnectsWithTheCursorAtOnce() {
        var run = MachineRun(jitter: [1])
        #expect(run.send(.deviceChanged).isEmpty, "not started: the first connection takes it")
        run.send(.start)
        run.send(.opened(id: run.lastConnection, hello))
        run.send(.frame(id: run.lastConnection, .durable(cursor: "101", .typing(conversation: UUID(), person: "x"))))
        let actions = run.send(.deviceChanged)
        #expect(actions.first == .close && run.connects.count == 2 && run.connects.last?.after == "101" && run.connects.last?.at == run.now)
        // Attached again while that one opens: it is left, and another speaks for the newest.
        run.send(.deviceChanged)
        #expect(run.connects.count == 3)
        run.send(.unreachable(id: run.lastConnection))
        run.send(.deviceChanged)
        #expect(run.connects.count == 4 && run.connects.last?.at == run.now)
        run.advance(by: .seconds(120))
        #expect(run.connects.count == 4, "the cut-short wait's timer fires into nothing")
        run.send(.stop)
        #expect(run.send(.deviceChanged).isEmpty)
    }

    /// Messages loaded over REST before the first connection wait for it; their statuses
    /// then move with receipts like those the session saw arrive.
    @Test func messagesLoadedOverRESTAreFollowedOnceThePersonIsKnown() {
        var run = MachineRun(jitter: [1])
        let conversation = UUID()
        var mine = Message.sample(sequence: 4, from: "bob@acme.test")
        mine.status = .delivered
        #expect(run.send(.loadedMessages(conversation: conversation, [mine])).isEmpty)
        run.send(.start)
        let opened = run.send(.opened(id: run.lastConnection, hello))
        #expect(opened.contains(.load(conversation)), "its people are loaded to judge receipts")
        let people = run.send(.loaded(.sample(id: conversation, people: [("bob@acme.test", 0, 0), ("alice@acme.test", 4, 0)])))
        #expect(people == [.lookUpPresence(id: run.lastConnection, ["alice@acme.test"])], "delivered, as the page said; Alice's presence asked")
        let receipt = Receipt(conversation: conversation, person: "alice@acme.test", received: nil, read: 4)
        let read = run.send(.frame(id: run.lastConnection, .durable(cursor: "101", .receipt(receipt))))
        #expect(read.contains(.emit(.status(conversation: conversation, message: mine.id, sequence: 4, status: .read))))
    }

    /// A token refused (401 on connecting, 4401 on an open socket) that the app's provider
    /// replaced: connect again at once, the cursor kept; a new token refused again waits.
    @Test func aRenewedTokenConnectsAgainAtOnceAndARefusedRenewalBacksOff() {
        var run = MachineRun(jitter: [1])
        run.send(.start)
        run.send(.credentialRenewed(id: run.lastConnection))
        #expect(run.connects.count == 2 && run.connects.last?.at == run.now)
        run.send(.credentialRenewed(id: run.lastConnection))
        #expect(run.connects.count == 2 && run.timers.count == 1, "refused again: a wait")
        run.advance(by: .seconds(60))
        run.send(.opened(id: run.lastConnection, hello))
        run.send(.credentialRenewed(id: run.lastConnection))
        #expect(run.connects.count == 4 && run.connects.last?.after == "100" && run.connects.last?.at == run.now)
        #expect(run.machine.state == .connecting(attempt: 0))
        // An old connection's renewal is ignored.
        #expect(run.send(.credentialRenewed(id: 1)).isEmpty)
    }

    /// The server tells a conversation peer's changes, not their state when the socket opens:
    /// the session reads it over REST for each connection, once a person, and what a frame said
    /// meanwhile wins over what was read.
    @Test func conversationPeersPresenceIsLookedUpOnEachConnection() {
        var run = MachineRun(jitter: [1])
        let conversation = UUID()
        run.send(.start)
        run.send(.opened(id: run.lastConnection, hello))
        let people: [(String, received: Int64, read: Int64)] = [("bob@acme.test", 0, 0), ("alice@acme.test", 0, 0), ("carol@acme.test", 0, 0)]
        let loaded = run.send(.loaded(.sample(id: conversation, people: people)))
        #expect(loaded == [.lookUpPresence(id: run.lastConnection, ["alice@acme.test", "carol@acme.test"])])
        #expect(run.send(.loaded(.sample(id: conversation, people: people))).isEmpty, "once a connection")
        let heard = Presence(person: "carol@acme.test", online: true, lastSeen: nil)
        run.send(.frame(id: run.lastConnection, .ephemeral(.presence([heard]))))
        let read = [
            Presence(person: "alice@acme.test", online: true, lastSeen: nil), Presence(person: "carol@acme.test", online: false, lastSeen: nil)
        ]
        #expect(run.send(.presenceFound(id: run.lastConnection, read)) == [.emit(.presence([read[0]]))])
        // A new connection asks again.
        run.send(.closed(id: run.lastConnection, code: 1006))
        run.advance(by: .seconds(60))
        let reopened = run.send(.opened(id: run.lastConnection, hello))
        #expect(reopened.contains(.lookUpPresence(id: run.lastConnection, ["alice@acme.test", "carol@acme.test"])))
    }

    @Test func closeCode4401AndA401EndTheSessionForGood() {
        var run = MachineRun()
        run.send(.start)
        run.send(.opened(id: 1, hello))
        #expect(run.send(.closed(id: 1, code: 4401)) == [.emit(.connection(.ended(.unauthorized))), .finish])
        #expect(run.send(.networkAvailable).isEmpty && run.send(.foreground(true)).isEmpty && run.send(.start).isEmpty)
        run.advance(by: .seconds(3_600))
        #expect(run.connects.count == 1 && run.machine.state == .ended(.unauthorized))

        var refused = MachineRun()
        refused.send(.start)
        #expect(refused.send(.refused(id: 1, status: 401, retryAfter: nil)).contains(.finish))
        refused.advance(by: .seconds(3_600))
        #expect(refused.connects.count == 1)
    }

    @Test func aRefusalThatAskingAgainCannotChangeEndsTheSessionAndTheOthersAreRetried() {
        for (status, field, ends) in [
            (422, "device", true), (400, nil, true), (404, nil, true), (426, nil, true), (429, nil, false), (503, nil, false)
        ] {
            var run = MachineRun()
            run.send(.start)
            run.send(.refused(id: 1, status: status, retryAfter: nil, field: field, detail: "why"))
            run.advance(by: .seconds(60))
            if ends {
                #expect(run.machine.state == .ended(.refused(status: status, detail: "why")) && run.connects.count == 1, "\(status)")
            } else {
                #expect(run.connects.count == 2, "\(status)")
            }
        }
        // A cursor the server does not take: from now on, and the app reloads.
        var run = MachineRun(cursor: "not-ours")
        run.send(.start)
        #expect(run.connects.last?.after == "not-ours")
        let actions = run.send(.refused(id: 1, status: 422, retryAfter: nil, field: "after", detail: "after: not a cursor"))
        #expect(actions.first == .emit(.resync(reason: "cursor_refused")))
        #expect(run.connects.count == 2 && run.connects.last?.after == nil)
    }

    @Test func everyOtherCloseReconnectsWithTheCursorOfTheLastFrameHandedOver() {
        var run = MachineRun(cursor: "100")
        run.send(.start)
        #expect(run.connects.last?.after == "100")
        run.send(.opened(id: 1, hello))
        let message = Message.sample(sequence: 7, from: "alice@acme.test")
        run.send(.frame(id: 1, .durable(cursor: "101", .message(conversation: UUID(), message: message))))
        #expect(run.actions.contains(.saveCursor("101")))
        for code in [1000, 1001, 1006, 1008, 1011, 1013, 4408] {
            run.send(.closed(id: run.lastConnection, code: code))
            run.advance(by: .seconds(60))
            #expect(run.connects.last?.after == "101", "after close \(code)")
            run.send(.opened(id: run.lastConnection, hello))
        }
    }

    @Test func aFrameIsNeverHandedOverTwiceNorOneOfAnOldConnection() {
        var run = MachineRun(cursor: "100")
        run.send(.start)
        run.send(.opened(id: 1, hello))
        let conversation = UUID()
        let frames = (101...103).map {
            ServerFrame.durable(cursor: "\($0)", .message(conversation: conversation, message: .sample(sequence: Int64($0), from: "a@acme.test")))
        }
        for frame in frames { run.send(.frame(id: 1, frame)) }
        run.send(.closed(id: 1, code: 1006))
        run.advance(by: .seconds(60))
        run.send(.opened(id: 2, hello))
        // A server that sent the seam's frames again, and a late frame of the dead connection.
        run.send(.frame(id: 2, frames[1]))
        run.send(.frame(id: 2, frames[2]))
        run.send(.frame(id: 1, .durable(cursor: "104", .badge(3))))
        run.send(.frame(id: 2, .durable(cursor: "104", .message(conversation: conversation, message: .sample(sequence: 104, from: "a@acme.test")))))
        let sequences = run.events.compactMap { if case .message(_, let message) = $0 { message.sequence } else { nil } }
        #expect(sequences == [101, 102, 103, 104])
    }

    @Test func whatTheServerMustKnowIsSentAgainAfterEachReconnect() {
        var run = MachineRun()
        let screen = UUID()
        // Said before the first connection, or while away: kept for the next.
        run.send(.view(screen))
        run.send(.subscribe(["dana@acme.test"]))
        #expect(run.sent.isEmpty)
        run.send(.start)
        run.send(.opened(id: 1, hello))
        #expect(run.sent == [.viewing(screen), .subscribe(["dana@acme.test"])])
        run.send(.foreground(true))
        run.send(.subscribe(["dana@acme.test", "erin@acme.test"]))
        run.send(.closed(id: 1, code: 1001))
        run.advance(by: .seconds(60))
        let before = run.sent.count
        run.send(.opened(id: 2, hello))
        #expect(Array(run.sent[before...]) == [.viewing(screen), .foreground(true), .subscribe(["dana@acme.test", "erin@acme.test"])])
        // Sent while away: not sent into a closed socket.
        run.send(.closed(id: 2, code: 1006))
        let away = run.sent.count
        run.send(.send(.read(conversation: screen, sequence: 9)))
        #expect(run.sent.count == away)
    }

    @Test func resyncIsOneEventAndTheSessionGoesOnFromHellosCursor() {
        var run = MachineRun(cursor: "5")
        run.send(.start)
        run.send(.opened(id: 1, ServerFrame.Hello(person: "bob@acme.test", cursor: "900", heartbeat: 15)))
        let actions = run.send(.frame(id: 1, .resync(reason: "cursor_expired")))
        #expect(actions == [.saveCursor("900"), .emit(.resync(reason: "cursor_expired"))])
        run.send(.closed(id: 1, code: 1006))
        run.advance(by: .seconds(60))
        #expect(run.connects.last?.after == "900")
    }

    @Test func theFirstConnectionKeepsHellosCursorAndStopCloses() {
        var run = MachineRun()
        run.send(.start)
        #expect(run.connects.last?.after == nil)
        #expect(run.send(.opened(id: 1, hello)).contains(.saveCursor("100")))
        #expect(run.send(.stop) == [.close, .emit(.connection(.ended(.stopped))), .finish])
    }

    @Test func receiptsBecomeStatusesOnceTheConversationsPeopleAreKnown() {
        var run = MachineRun()
        run.send(.start)
        run.send(.opened(id: 1, hello))
        let conversation = UUID()
        let mine = Message.sample(sequence: 4, from: "bob@acme.test")
        run.send(.frame(id: 1, .durable(cursor: "101", .message(conversation: conversation, message: mine))))
        #expect(run.actions.last == .load(conversation))
        run.send(
            .frame(id: 1, .durable(cursor: "102", .receipt(Receipt(conversation: conversation, person: "dana@acme.test", received: 4, read: nil)))))
        run.send(.loaded(.sample(id: conversation, people: [("bob@acme.test", 0, 0), ("dana@acme.test", 0, 0)])))
        run.send(
            .frame(id: 1, .durable(cursor: "103", .receipt(Receipt(conversation: conversation, person: "dana@acme.test", received: 4, read: 4)))))
        let statuses = run.events.compactMap { if case .status(conversation, mine.id, 4, let status) = $0 { status } else { nil } }
        #expect(statuses == [.sent, .delivered, .read])
        // Loaded once only.
        #expect(run.actions.filter { $0 == .load(conversation) }.count == 1)
    }

    @Test func aConversationThatFailedToLoadIsLoadedAgainWithItsNextEvent() {
        var run = MachineRun()
        run.send(.start)
        run.send(.opened(id: 1, hello))
        let conversation = UUID()
        let first = Message.sample(sequence: 1, from: "bob@acme.test")
        #expect(run.send(.frame(id: 1, .durable(cursor: "101", .message(conversation: conversation, message: first)))).last == .load(conversation))
        run.send(.loadFailed(conversation))
        let second = Message.sample(sequence: 2, from: "bob@acme.test")
        #expect(run.send(.frame(id: 1, .durable(cursor: "102", .message(conversation: conversation, message: second)))).last == .load(conversation))
        run.send(.loaded(.sample(id: conversation, people: [("bob@acme.test", 0, 0), ("dana@acme.test", 2, 0)])))
        let delivered = run.events.compactMap { if case .status(_, let id, _, .delivered) = $0 { id } else { nil } }
        #expect(Set(delivered) == [first.id, second.id])
    }
}
