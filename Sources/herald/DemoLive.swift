import Foundation
import HeraldAPI
import HeraldBench
import HeraldCore
import HeraldStore
import Logging
import ServiceLifecycle

extension DemoStory {
    /// The live channel (docs/live-protocol.md): an in-process `herald serve`, Carol's app open on the
    /// group over a real WebSocket; Alice's next message reaches it live, her phone is not
    /// pushed (`viewing`), and the others' are.
    mutating func playLive(conversation: UUID, logger: Logger) async throws {
        // A pool of its own, as herald serve has: the demo's is two connections.
        try await store.withPoolOfItsOwn(size: 4) { serverStore in
            try await playLive(conversation: conversation, serverStore: serverStore, logger: logger)
        }
    }

    private mutating func playLive(conversation: UUID, serverStore: Store, logger: Logger) async throws {
        let api = HeraldAPI(store: serverStore, logger: logger)
        let (urls, announce) = AsyncStream.makeStream(of: String.self)
        let application = try APIServer(api: api, host: "127.0.0.1", port: 0, tls: nil).application { announce.yield($0) }
        let services = ServiceGroup(
            configuration: .init(
                services: [.init(service: application), .init(service: api.credentialService), .init(service: api.live)], logger: logger))
        let running = Task {
            defer { announce.finish() }
            try await services.run()
        }
        do {
            var base = ""
            for await url in urls {
                base = url
                break
            }
            guard let client = LiveClient(base: base) else { throw UserFacingMessage("the demo's server did not start") }
            let carol = try await store.withTenant(tenant) {
                try await $0.createPersonToken(for: "carol@demo.test", name: "demo live", lifetime: .seconds(600), by: "herald demo")
            }
            print("")
            printStyled(style.bold("▸ Carol opens the group in her app: a live socket (GET /v1/live) that says it views it"))
            let text = "Pump room is open again. Thanks, everyone!"
            let (shown, cursor, message) = try await client.session(token: carol.secret) { session -> (String, String, MessageRecord) in
                guard let hello = try await session.receive(type: "hello") else { throw UserFacingMessage("Carol's socket got no hello") }
                printStyled(style.dim("  ⇠ hello: \(hello["person"] as? String ?? "?"), cursor \(hello["cursor"] as? String ?? "?")"))
                try await session.send(#"{"type":"viewing","conversation":"\#(conversation.lowercasedString)"}"#)
                // Frames are handled in order: once the pong is back, the viewing is stored.
                try await session.send(#"{"type":"ping"}"#)
                guard try await session.receive(type: "pong") != nil else { throw UserFacingMessage("Carol's socket got no pong") }
                let posted = try await step("Alice posts to the group while Carol has it open (no push to Carol's phone: she is viewing it)") {
                    try await $0.sendMessage(actor: "alice@demo.test", conversation: conversation, text: text, clientID: nil, sentAt: nil)
                }
                // Frames the feed numbered after hello's cursor come first (the story's, when the
                // server started before they were numbered): Alice's message is the one with its id.
                let id = posted.message.id.lowercasedString
                let frame = try await session.receive(type: "message") { frame in
                    ((frame["message"] as? [String: Any])?["id"] as? String)?.lowercased() == id
                }
                guard let frame else {
                    throw UserFacingMessage("the message did not reach Carol's socket within a minute")
                }
                let shown = (frame["message"] as? [String: Any])?["text"] as? String ?? "(nothing)"
                return (shown, frame["cursor"] as? String ?? "?", posted.message)
            }
            printStyled("  ⚡ " + style.bold("Carol's app, live") + "  " + style.dim("[cursor \(cursor)]") + "\n     " + TerminalText.escaped(shown))
            let entries = try await store.withTenant(tenant) {
                try await $0.history(viewer: "ada@demo.test", filter: .init(conversation: conversation.lowercasedString, limit: 100))
            }
            if let entry = entries.first(where: { $0.recipient.email == "carol@demo.test" && $0.eventAt >= message.storedAt.addingTimeInterval(-1) })
            {
                printStyled(
                    style.dim(
                        "  herald why --message \(message.id.lowercasedString): carol@demo.test — \(entry.decision?.rawValue ?? entry.status)")
                        + style.dim(entry.reason.map { " (\($0))" } ?? ""))
            }
        } catch {
            await services.triggerGracefulShutdown()
            _ = try? await running.value
            throw error
        }
        await services.triggerGracefulShutdown()
        try await running.value
    }
}
