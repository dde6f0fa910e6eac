import Foundation
import HeraldKit
import Testing

/// A client given several servers moves to the next when one cannot be reached.
@Suite struct FailoverTests {
    /// The first server is down; the second answers `{}`-shaped `me`. A boundary double: the
    /// real servers' takeover is in HeraldKitServerTests.
    final class TwoServers: HTTPTransport, @unchecked Sendable {
        let down: URL
        private let lock = NSLock()
        private(set) var tried: [(String, URL)] = []
        init(down: URL) { self.down = down }
        func send(_ request: HTTPRequestData, to server: URL, timeout: Duration) async throws -> HTTPResponseData {
            lock.withLock { tried.append((request.method, server)) }
            if server == down { throw HeraldError.transport("connection refused") }
            let me =
                #"{"tenant":{"slug":"acme","name":"Acme"},"credential":{"id":"0193a1b2-0000-7000-8000-000000000001","kind":"person_token"},"isAdmin":false}"#
            return HTTPResponseData(status: request.method == "GET" ? 200 : 404, headers: [:], body: Data(me.utf8))
        }
    }

    @Test func aReadGoesToTheNextServerAndAWriteIsNotSentTwice() async throws {
        let first = URL(string: "http://one.test")!
        let second = URL(string: "http://two.test")!
        let transport = TwoServers(down: first)
        let client = HeraldClient(HeraldClient.Configuration(servers: [first, second], token: "hrp_x", transport: transport))
        #expect(try await client.me().tenant.slug == "acme")
        #expect(transport.tried.map(\.1) == [first, second] && client.currentServer == second)

        let back = HeraldClient(HeraldClient.Configuration(servers: [first, second], token: "hrp_x", transport: transport))
        await #expect(throws: HeraldError.transport("connection refused")) {
            try await back.send(text: "hi", to: UUID(), clientId: "c-1")
        }
        // Not sent to the second (it may have arrived); the next call goes there.
        #expect(transport.tried.suffix(1).map(\.1) == [first] && back.currentServer == second)
    }
}
