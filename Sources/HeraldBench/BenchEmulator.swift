import Foundation
import HeraldEmulator
import HeraldHTTP

/// The emulator a bench talks to: its own, in this process, or one already running.
enum BenchEmulator: Sendable {
    case inProcess(Emulator)
    case remote(base: String, http: HTTPClient)

    var isInProcess: Bool {
        if case .inProcess = self { true } else { false }
    }

    func acceptedCount() async -> Int {
        switch self {
        case .inProcess(let emulator): return await emulator.acceptedCount()
        case .remote: return await stats()?["accepted"] ?? 0
        }
    }

    /// The CPU time the emulator's process has used, in seconds; only one running on its
    /// own says (in this process, it cannot be told apart from the workers).
    func cpuSeconds() async -> Double? {
        guard case .remote = self, let microseconds = await stats()?["cpuMicroseconds"] else { return nil }
        return Double(microseconds) / 1_000_000
    }

    /// Webhook requests the emulator's receiver took, how many repeated an id, and the
    /// connections the emulator accepted (every port, since it started).
    func webhooks() async -> (received: Int, repeated: Int, connections: Int) {
        switch self {
        case .inProcess(let emulator): return (emulator.webhooks.received, emulator.webhooks.repeated, emulator.connectionCount)
        case .remote:
            let stats = await stats()
            return (stats?["webhooks"] ?? 0, stats?["webhookRepeats"] ?? 0, stats?["connections"] ?? 0)
        }
    }

    private func stats() async -> [String: Int]? {
        guard case .remote(let base, let http) = self,
            let response = try? await http.send(HTTPRequest(url: base + "/emulator/stats", timeout: .seconds(10)))
        else { return nil }
        return try? JSONDecoder().decode([String: Int].self, from: Data(response.body))
    }

    func arrivals() async throws -> [String: Date] {
        let messages: [RecordedMessage]
        switch self {
        case .inProcess(let emulator): messages = await emulator.messages()
        case .remote(let base, let http):
            let response = try await http.send(HTTPRequest(url: base + "/emulator/messages", timeout: .seconds(60)))
            messages = try JSONDecoder.emulator.decode([RecordedMessage].self, from: Data(response.body))
        }
        return Dictionary(messages.map { ($0.token, $0.receivedAt) }, uniquingKeysWith: { first, _ in first })
    }
}
