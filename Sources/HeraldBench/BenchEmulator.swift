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
        case .remote(let base, let http):
            guard let response = try? await http.send(HTTPRequest(url: base + "/emulator/stats", timeout: .seconds(10))),
                let stats = try? JSONDecoder().decode([String: Int].self, from: Data(response.body))
            else { return 0 }
            return stats["accepted"] ?? 0
        }
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
