import Foundation
import HeraldKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// herald-chat, the example, as a person uses it: a process of its own, killed and started again.
@Suite struct ExampleTests {
    /// A run of herald-chat with `input` on its standard input.
    final class Chat: @unchecked Sendable {
        let process = Process()
        let output: URL

        init(_ server: Server, token: String, state: URL, input: String) throws {
            let binary = try Herald.setting("HERALD_CHAT_BINARY")
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["--server", server.url.absoluteString, "--token", token, "--state", state.path]
            output = state.appendingPathComponent("out-\(UUID().uuidString).txt").creatingFile()
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = process.standardOutput
            let stdin = Pipe()
            process.standardInput = stdin
            try process.run()
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try stdin.fileHandleForWriting.close()
        }

        var lines: [String] { ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }

        /// Waits until its output has a line for which `test` holds.
        func wait(for what: String, _ test: (String) -> Bool) async throws {
            for _ in 0..<3_000 {
                if lines.contains(where: test) { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("herald-chat printed no \(what) in 300 s: \(lines)")
            throw Herald.Missing(description: "no \(what)")
        }

        func exited() async -> Int32 {
            while process.isRunning { try? await Task.sleep(for: .milliseconds(50)) }
            return process.terminationStatus
        }
    }

    /// `/inbox` lists what Bob was told with its counts and badge; `/inbox read` reads it all.
    @Test func theChatShowsTheInboxAndItsBadge() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        try await Herald.run(
            [
                "activity", "assign", "--team", "crew", "--to", fixture.email("bob"), "--name", "Fence repair", "--deadline", "2031-01-31",
                "--as", fixture.email("alice")
            ], tenant: fixture.tenant)
        try await Herald.run(["dispatch", "--drain"], tenant: fixture.tenant)
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("herald-chat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let chat = try Chat(server, token: fixture.token("bob"), state: state, input: "/inbox\n/inbox read\n/inbox\n")
        #expect(await chat.exited() == 0)
        let lines = chat.lines
        #expect(lines.contains("== inbox: 1 unread (1 new), badge 1"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("  • ") && $0.contains("Fence repair") && $0.hasSuffix("[assigned: start]") }, "\(lines)")
        #expect(lines.contains("-- 1 read; badge 0") && lines.contains("== inbox: 0 unread (0 new), badge 0"), "\(lines)")
    }

    @Test func messagesTypedWhileTheServerIsDownGoOnceInOrderAfterTheChatIsKilledAndStartedAgain() async throws {
        let fixture = try await Fixture()
        let server = try await Server()
        let other = try await Server()
        let conversation = try await fixture.client("alice", [server]).createConversation(with: [fixture.email("bob")])
        let bob = EventLog(LiveSession(client: fixture.client("bob", [other]), cursorStore: MemoryCursorStore()))
        await bob.session.start()
        try await bob.connected()
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("herald-chat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)

        // Online once: it signs in, lists the conversation, says hello, and ends with its input.
        let first = try Chat(server, token: fixture.token("alice"), state: state, input: "/open 1\nhello\n")
        #expect(await first.exited() == 0)
        #expect(first.lines.contains { $0.hasPrefix("  ✓ #") && $0.hasSuffix(" hello") })

        // The server goes away; five lines typed; the chat is killed before it could send them.
        server.kill()
        let offline = (1...5).map { "offline \($0)" }
        let second = try Chat(server, token: fixture.token("alice"), state: state, input: "/open 1\n" + offline.joined(separator: "\n") + "\n")
        try await second.wait(for: "the fifth pending line") { $0 == "  · offline 5" }
        kill(second.process.processIdentifier, SIGKILL)
        _ = await second.exited()

        // Started again with the server back: it sends them, once each, in order.
        try await server.start()
        let third = try Chat(server, token: fixture.token("alice"), state: state, input: "")
        #expect(await third.exited() == 0)
        // "  ✓ #SEQUENCE TEXT" for each message the server stored.
        let stored = third.lines.filter { $0.hasPrefix("  ✓ #") }.compactMap {
            $0.split(separator: " ", maxSplits: 2).dropFirst(2).first.map(String.init)
        }
        #expect(stored == offline)

        try await bob.received(6)
        try await Task.sleep(for: .milliseconds(300))
        #expect(bob.messages.map(\.text) == ["hello"] + offline)
        #expect(try await fixture.client("alice", [other]).messages(in: conversation.id).map(\.text) == ["hello"] + offline)
        await bob.session.stop()
    }
}
