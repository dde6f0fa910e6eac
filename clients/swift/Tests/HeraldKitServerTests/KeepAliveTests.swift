#if os(Linux) && NIOTransports
    import Foundation
    import Testing

    @testable import HeraldKit

    /// The NIO transport keeps its connections alive against the real server.
    @Suite struct KeepAliveTests {
        @Test func requestsShareAConnectionAndOneTheServerClosedIsReplaced() async throws {
            let fixture = try await Fixture(people: ["alice", "bob"])
            let server = try await Server()
            let pool = NIOConnectionPool()
            let configuration = HeraldClient.Configuration(
                servers: [server.url], token: fixture.token("bob"), transport: NIOHTTPTransport(pool: pool))
            let bob = HeraldClient(configuration)
            for _ in 0..<20 { #expect(try await bob.me().person?.email == fixture.email("bob")) }
            #expect(pool.opened.current == 1)

            // Eight at once need eight connections at most; after them, none more.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { _ = try await bob.conversations() } }
                try await group.waitForAll()
            }
            let afterBurst = pool.opened.current
            #expect((1...8).contains(afterBurst))
            for _ in 0..<10 { _ = try await bob.devices() }
            let conversation = try await bob.createConversation(with: [fixture.email("alice")])
            #expect(pool.opened.current == afterBurst)

            // The server dies and comes back on its port: its connections are gone, and the
            // next request (GET or POST) goes on a new one.
            server.kill()
            try await server.start()
            #expect(try await bob.conversation(conversation.id).id == conversation.id)
            #expect(try await bob.send(text: "after the restart", to: conversation.id).message.text == "after the restart")
            #expect(pool.opened.current == afterBurst + 1)
        }

        @Test func aConnectionIdleTooLongIsNotReused() async throws {
            let fixture = try await Fixture(people: ["bob"])
            let server = try await Server()
            let pool = NIOConnectionPool(maxIdle: .zero)
            let bob = HeraldClient(
                HeraldClient.Configuration(servers: [server.url], token: fixture.token("bob"), transport: NIOHTTPTransport(pool: pool)))
            for _ in 0..<3 { _ = try await bob.me() }
            #expect(pool.opened.current == 3)
        }
    }
#endif
