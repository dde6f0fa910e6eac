import Foundation

/// What the emulator remembers: issued access tokens, accepted messages, faults, counters.
actor EmulatorState {
    var faults: EmulatorConfiguration.Faults
    private(set) var messages: [RecordedMessage] = []
    private var accessTokens: Set<String> = []
    private(set) var accepted = 0
    private(set) var rejected = 0
    private var random = SystemRandomNumberGenerator()

    /// Keep only token and time of each message (benchmarks: hundreds of thousands of them).
    private let lean: Bool

    init(faults: EmulatorConfiguration.Faults, lean: Bool = false) {
        self.faults = faults
        self.lean = lean
    }

    func issueAccessToken() -> String {
        let token = "emu-" + UUID().uuidString.lowercased()
        accessTokens.insert(token)
        return token
    }

    func isValid(accessToken: String) -> Bool { accessTokens.contains(accessToken) }

    /// Forgets every access token, as if they all expired (tests of the 401 path).
    func revokeAccessTokens() { accessTokens.removeAll() }

    func record(_ message: RecordedMessage) {
        messages.append(lean ? message.lean : message)
        accepted += 1
    }

    func countRejection() { rejected += 1 }

    func clear() {
        messages.removeAll()
        accepted = 0
        rejected = 0
    }

    func setFaults(_ faults: EmulatorConfiguration.Faults) { self.faults = faults }

    /// Which injected failure, if any, this send gets.
    enum Injected { case none, unavailable, throttled }

    func drawFault() -> Injected {
        let roll = Double.random(in: 0..<1, using: &random)
        if roll < faults.unavailableShare { return .unavailable }
        if roll < faults.unavailableShare + faults.throttledShare { return .throttled }
        return .none
    }
}
