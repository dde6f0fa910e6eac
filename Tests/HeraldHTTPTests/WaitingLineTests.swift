import Testing

@testable import HeraldHTTP

struct WaitingLineTests {
    @Test func urgentCallersGoFirstThenTheRestInArrivalOrder() {
        var line = WaitingLine<String>()
        line.append("send 1", id: 1, urgent: false)
        line.append("send 2", id: 2, urgent: false)
        line.append("token", id: 3, urgent: true)
        line.append("send 3", id: 4, urgent: false)
        #expect(line.next(urgent: true, normal: true) == "token")
        #expect(line.next(urgent: true, normal: true) == "send 1")
        #expect(line.next(urgent: true, normal: true) == "send 2")
        #expect(line.next(urgent: true, normal: true) == "send 3")
        #expect(line.next(urgent: true, normal: true) == nil)
        #expect(line.isEmpty)
    }

    /// Only the reserve is left: an urgent caller may take it, the rest keep waiting.
    @Test func whoMayGoDecidesWhichLineMoves() {
        var line = WaitingLine<String>()
        line.append("send", id: 1, urgent: false)
        #expect(line.next(urgent: true, normal: false) == nil)
        line.append("token", id: 2, urgent: true)
        #expect(line.next(urgent: false, normal: true) == "send")
        #expect(line.next(urgent: false, normal: false) == nil)
        #expect(line.next(urgent: true, normal: false) == "token")
    }

    @Test func aCallerWhoLeftIsSkippedWhenItsTurnComes() {
        var line = WaitingLine<Int>()
        for id in 0..<5 { line.append(id, id: id, urgent: false) }
        #expect(line.remove(id: 0) == 0)
        #expect(line.remove(id: 3) == 3)
        #expect(line.remove(id: 3) == nil)
        #expect(line.count == 3)
        var order: [Int] = []
        while let next = line.next(urgent: true, normal: true) { order.append(next) }
        #expect(order == [1, 2, 4])
    }

    /// Long lines, refilled while they drain and with callers leaving from the middle, keep
    /// their order (the front is compacted away as the line moves).
    @Test func aLongLineKeepsItsOrderWhileItMoves() {
        var line = WaitingLine<Int>()
        var expected: [Int] = []
        var taken: [Int] = []
        var id = 0
        for round in 0..<5 {
            for _ in 0..<20_000 {
                line.append(id, id: id, urgent: false)
                if id % 7 == 3 { _ = line.remove(id: id) } else { expected.append(id) }
                id += 1
            }
            for _ in 0..<(round == 4 ? 100_000 : 15_000) {
                guard let next = line.next(urgent: true, normal: true) else { break }
                taken.append(next)
            }
        }
        #expect(taken == expected)
        #expect(line.isEmpty)
    }
}
