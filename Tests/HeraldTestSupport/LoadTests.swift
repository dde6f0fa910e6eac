/// The tests that drive thousands of sends (an emulator, a client and often workers and
/// PostgreSQL, flat out) each take both cores of the project's machine on their own. Swift
/// Testing runs suites side by side, and three of them at once starved one another until a
/// single request sat past its 30-second timeout (10,000 sends took 168 s instead of 27). They
/// take turns through this gate, first come first served; the rest of the suite still runs
/// beside whichever one holds it.
public enum LoadTests {
    public static func oneAtATime<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        await gate.enter()
        do {
            let result = try await body()
            await gate.leave()
            return result
        } catch {
            await gate.leave()
            throw error
        }
    }

    private static let gate = Gate()

    private actor Gate {
        private var busy = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        func enter() async {
            guard busy else {
                busy = true
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func leave() {
            if waiting.isEmpty {
                busy = false
            } else {
                waiting.removeFirst().resume()
            }
        }
    }
}
