import Foundation
import Synchronization
import Testing

@testable import HeraldEmulator
@testable import HeraldHTTP

/// Requests to URLs that others choose (webhooks): the address of every connection is asked
/// about before it is made, over cleartext and TLS alike, and an answer is read only up to its
/// limit; against the emulator's real listeners on 127.0.0.1.
@Suite struct ConnectGuardTests {
    @Test func aRefusedAddressIsNeverConnectedTo() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator, .init(http1Only: true, engine: .libcurl))
            defer { http.shutdown() }
            for url in [endpoints.http1 + "/emulator/stats", endpoints.https + "/emulator/stats"] {
                let asked = AskedAddresses()
                var request = HTTPRequest(url: url, timeout: .seconds(30))
                request.connectGuard = { address in
                    asked.add(address)
                    return "\(address) is a loopback address: refused"
                }
                await #expect(throws: HTTPClientError(kind: .refused, message: "127.0.0.1 is a loopback address: refused", curlCode: 7)) {
                    try await http.send(request)
                }
                #expect(asked.all == ["127.0.0.1"])
            }
            #expect(http.connectionsOpened == 0)
        }
    }

    @Test func anAllowedAddressIsConnectedToAndTheAnswerReadUpToItsLimit() async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, endpoints in
            let http = try client(emulator, .init(http1Only: true, engine: .libcurl))
            defer { http.shutdown() }
            for url in [endpoints.http1 + "/emulator/stats", endpoints.https + "/emulator/stats"] {
                var request = HTTPRequest(url: url, timeout: .seconds(30))
                request.connectGuard = { _ in nil }
                let whole = try await http.send(request)
                #expect(whole.status == 200)
                #expect(whole.body.count > 16)
                request.maxResponseBytes = 16
                let cut = try await http.send(request)
                #expect(cut.status == 200)
                #expect(cut.body == Array(whole.body.prefix(16)))
            }
        }
    }
}

/// The addresses a guard was asked about, from libcurl's thread.
private final class AskedAddresses: Sendable {
    private let addresses = Mutex<[String]>([])
    func add(_ address: String) { addresses.withLock { $0.append(address) } }
    var all: [String] { addresses.withLock { $0 } }
}
