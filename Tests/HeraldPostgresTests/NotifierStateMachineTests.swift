import Testing

@testable import HeraldPostgres

/// Who listens to what on the one LISTEN connection, with no database.
@Suite struct NotifierStateMachineTests {
    @Test func theFirstSubscriptionStartsTheThreadAndTheConnectionListensToWhatIsWanted() {
        var machine = NotifierStateMachine()
        let result1 = machine.subscribe(1, to: ["a", "b"])
        #expect(result1 == .startThread)
        let result2 = machine.subscribe(2, to: ["b", "c"])
        #expect(result2 == .none)
        let (listen, tell) = machine.connected()
        #expect(listen == ["a", "b", "c"])
        #expect(tell == [1: false, 2: false])
        #expect(Set(machine.recipients(of: "b")) == [1, 2] && machine.recipients(of: "a") == [1] && machine.recipients(of: "z").isEmpty)
    }

    @Test func aSubscriptionToChannelsListenedToAlreadyIsToldAtOnceAndANewChannelWakesTheThread() {
        var machine = NotifierStateMachine()
        _ = machine.subscribe(1, to: ["a"])
        _ = machine.connected()
        let result3 = machine.subscribe(2, to: ["a"])
        #expect(result3 == .tellConnected(reconnected: false))
        let result4 = machine.subscribe(3, to: ["a", "b"])
        #expect(result4 == .wakeThread)
        let result5 = machine.changes()
        #expect(result5 == .init(listen: ["b"], unlisten: [], tell: [3: false]))
        let result6 = machine.changes()
        #expect(result6 == .init())
    }

    @Test func aChannelNobodyWantsIsLetGoAndTheLastSubscriptionEndsTheThread() {
        var machine = NotifierStateMachine()
        _ = machine.subscribe(1, to: ["a"])
        _ = machine.subscribe(2, to: ["a", "b"])
        _ = machine.connected()
        let result7 = machine.unsubscribe(1)
        #expect(result7 == .none)
        let result8 = machine.unsubscribe(2)
        #expect(result8 == .wakeThread)
        let result9 = machine.changes()
        #expect(result9 == .init(stop: true))
        #expect(!machine.threadRunning)
        // A subscription after that starts a thread again.
        let result10 = machine.subscribe(3, to: ["a"])
        #expect(result10 == .startThread)
    }

    @Test func afterALostConnectionEveryoneIsToldAndThenToldTheyListenAgain() {
        var machine = NotifierStateMachine()
        _ = machine.subscribe(1, to: ["a"])
        _ = machine.connected()
        let result11 = machine.subscribe(2, to: ["b"])
        #expect(result11 == .wakeThread)
        let lost = machine.disconnected()
        #expect(Set(lost) == [1, 2])
        // Lost again before it was back: nobody is told twice.
        let result12 = machine.disconnected()
        #expect(result12.isEmpty)
        let (listen, tell) = machine.connected()
        #expect(listen == ["a", "b"])
        // 1 had been told it listened: this is a reconnection for it; 2 listens for the first time.
        #expect(tell == [1: true, 2: false])
    }

    @Test func nobodyLeftWhileItCannotConnectEndsTheThread() {
        var machine = NotifierStateMachine()
        _ = machine.subscribe(1, to: ["a"])
        let result13 = machine.stopIfUnwanted()
        #expect(!result13)
        let result14 = machine.unsubscribe(1)
        #expect(result14 == .wakeThread)
        let result15 = machine.stopIfUnwanted()
        #expect(result15)
        #expect(!machine.threadRunning)
    }
}
