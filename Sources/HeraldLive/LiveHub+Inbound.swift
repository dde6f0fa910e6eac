import Foundation
import HeraldCore
import HeraldStore

extension LiveHub {
    /// What an app sends (docs/live-protocol.md): each frame checked as the REST API checks the same
    /// request; a refusal is an `error` frame and the socket stays open.
    public func receive(_ text: String, from socket: LiveSocket) async {
        switch LiveClientFrame.parse(text) {
        case .failure(let refusal):
            refuse(socket, refusal)
        case .success(let frame):
            do {
                try await handle(frame, from: socket)
            } catch {
                refuse(socket, because: error)
            }
        }
    }

    /// The `error` frame of a frame that failed.
    func refuse(_ socket: LiveSocket, because error: any Error) {
        switch error {
        case let error as StoreError where error.code == .notFound:
            refuse(socket, .init("not_found", "no conversation with this id that \(socket.person.email) takes part in"))
        case let error as StoreError:
            refuse(socket, .init(error.code.description, error.description))
        case let error as InputError:
            refuse(socket, .init("invalid_frame", error.description))
        default:
            logger.warning("a live frame failed", metadata: ["error": "\(error)"])
            refuse(socket, .init("unavailable", "the frame could not be handled now; send it again"))
        }
    }

    private func handle(_ frame: LiveClientFrame, from socket: LiveSocket) async throws {
        let person = socket.person
        switch frame {
        case .ping:
            socket.send(LiveFrame.text(LiveFrame.Pong()))
            metrics.sent("pong")
        case .viewing(let conversation):
            if let conversation {
                try await store.withTenant(socket.tenant) {
                    try await $0.setLiveViewing(person, conversation: conversation, seconds: Self.viewingSeconds)
                }
            }
            await perform(machine.withLock { $0.view(socket.id, conversation) })
        case .received(let conversation, let sequence):
            _ = try await store.withTenant(socket.tenant) {
                try await $0.changeConversation(actor: person.email, conversation: conversation, .received(upTo: sequence))
            }
        case .read(let conversation, let sequence):
            _ = try await store.withTenant(socket.tenant) {
                try await $0.changeConversation(actor: person.email, conversation: conversation, .readUpTo(sequence))
            }
        case .typing(let conversation):
            // One frame every few seconds is told; the rest cost nothing (no transaction).
            await perform(machine.withLock { $0.typing(socket.id, in: conversation, now: clock()) })
        case .foreground(let value):
            machine.withLock { $0.foreground(socket.id, value) }
            // A socket for one phone: while its app is in the foreground, chat pushes to that
            // phone are skipped (reason live); others of the person still get theirs.
            if let device = socket.device {
                try await store.withTenant(socket.tenant) {
                    try await $0.setLiveForeground(value, device: device, of: person, server: server)
                }
            }
        case .subscribePresence(let people):
            if let wait = requestBudget(socket.credentialID, socket.credentialKind) {
                // The last list stays.
                let seconds = max(1, Int(wait.components.seconds) + (wait.components.attoseconds > 0 ? 1 : 0))
                refuse(
                    socket,
                    .init(
                        "rate_limited",
                        "presence lookups count against the credential's rate, as GET /v1/presence does: subscribe again in \(seconds) s"))
                return
            }
            try await subscribe(socket, to: people)
        }
    }

    /// An `error` frame for what the app sent.
    public func refuse(_ socket: LiveSocket, _ refusal: LiveClientFrame.Refusal) {
        socket.send(LiveFrame.text(LiveFrame.Failure(code: refusal.code, detail: refusal.detail)))
        metrics.sent("error")
    }

    /// A socket's `viewing` lasts this long in the database, renewed while the socket lives.
    static let viewingSeconds = 60
}
