import HeraldLoops
import HeraldTesting
import Synchronization
import Testing

@Suite struct FailureLogTests {
    struct Refused: Error, CustomStringConvertible {
        var description: String { "connection refused" }
    }

    @Test func aStreakOfFailuresIsOneLineAndItsEndAnother() {
        let log = CapturedLog()
        let failures = FailureLog("live upkeep", logger: log.logger)
        for expected in 1...500 { #expect(failures.failed(Refused()) == expected) }
        failures.succeeded()
        failures.succeeded()
        #expect(log.lines.map(\.message) == ["live upkeep failed; retrying", "live upkeep works again"])
        #expect(log.lines[0].metadata["error"] == "connection refused")
        #expect(log.lines[1].metadata["failures"] == "500")
    }

    @Test func aTurnThatFailsPausesAndATurnCutShortByCancellationEndsTheLoop() async {
        let log = CapturedLog()
        let failures = FailureLog("claiming", logger: log.logger)
        let started = ContinuousClock.now
        let goesOn = await failures.attempt { throw Refused() }
        #expect(goesOn)
        #expect(started.duration(to: .now) >= RetryPause.after(failures: 1))

        // Cancelled: the turn's error (whatever it is) is no failure, and the loop ends.
        let turns = Atomic<Int>(0)
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self)
        let loop = Task {
            await failures.forEach(wakes) {
                turns.add(1, ordering: .relaxed)
                try await Task.sleep(for: .seconds(3_600))
            }
        }
        wake.yield()
        while turns.load(ordering: .relaxed) == 0 { await Task.yield() }
        loop.cancel()
        await loop.value
        #expect(turns.load(ordering: .relaxed) == 1)
        #expect(log.lines.count == 1)
    }
}
