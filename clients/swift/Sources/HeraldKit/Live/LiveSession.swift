import Foundation

/// The live channel (`/v1/live`) as an `AsyncSequence` of events, kept open for the app: it
/// resumes after the last cursor on every reconnect (nothing missed, nothing twice), backs off
/// with full jitter, tells the server again what this screen views and follows, folds receipts
/// into message statuses, and ends only when the app stops it or the credential is revoked
/// (`.connection(.ended(.unauthorized))`). docs/live-protocol.md, "What a client does".
///
/// ```swift
/// let session = LiveSession(client: client, cursorStore: FileCursorStore(named: me))
/// await session.start()
/// for await event in session { … }
/// ```
public final class LiveSession: AsyncSequence, Sendable {
    public typealias Element = LiveEvent
    private let runner: LiveRunner
    private let stream: AsyncStream<LiveItem>
    private let store: any CursorStore

    /// - Parameters:
    ///   - device: this phone's push token (or installation id), registered before: while the
    ///     app says it is in the foreground, chat pushes to this phone are skipped (it shows them).
    ///   - outbox: sent again as soon as a connection opens (the server is reachable).
    public init(
        client: HeraldClient, cursorStore: any CursorStore, device: String? = nil, outbox: Outbox? = nil, backoff: Backoff = Backoff()
    ) {
        let (stream, continuation) = AsyncStream<LiveItem>.makeStream(bufferingPolicy: .unbounded)
        self.stream = stream
        store = cursorStore
        let machine = SessionMachine(cursor: cursorStore.load(), backoff: backoff)
        runner = LiveRunner(
            machine: machine, client: client, device: device, outbox: outbox, continuation: continuation)
    }

    /// A session the app let go of closes its socket.
    deinit {
        let runner = runner
        Task { await runner.handle(.stop) }
    }

    public func makeAsyncIterator() -> Iterator { Iterator(base: stream.makeAsyncIterator(), store: store) }

    /// Hands over the events. A frame's cursor is saved when the app asks for the next event,
    /// that is once it has handled the frame: an app that ends while handling one gets it again
    /// after its restart, and none is skipped.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<LiveItem>.Iterator
        let store: any CursorStore

        public mutating func next() async -> LiveEvent? {
            while let item = await base.next() {
                switch item {
                case .event(let event): return event
                case .handled(let cursor): store.save(cursor)
                }
            }
            return nil
        }
    }

    /// Connects (once; later calls do nothing).
    public func start() async { await runner.handle(.start) }

    /// Closes the socket and ends the events (`.ended(.stopped)`).
    public func stop() async { await runner.handle(.stop) }

    /// The conversation on screen (`nil`: none): no push for it while the socket lives.
    public func view(_ conversation: UUID?) async { await runner.handle(.view(conversation)) }

    /// The app came to the foreground (`true`: reconnect now if waiting) or left it.
    public func foreground(_ value: Bool) async { await runner.handle(.foreground(value)) }

    /// The network came back or changed: reconnect now.
    public func networkAvailable() async { await runner.handle(.networkAvailable) }

    /// The people whose presence this screen follows besides the conversations' (at most
    /// 100; the whole list each time; `[]` clears it). Sent again after every reconnect.
    public func subscribe(to people: [String]) async { await runner.handle(.subscribe(people)) }

    /// The person read the conversation up to `sequence`.
    public func read(_ conversation: UUID, upTo sequence: Int64) async {
        await runner.handle(.send(.read(conversation: conversation, sequence: sequence)))
    }

    /// The app received the conversation up to `sequence` (a message written to this socket
    /// counts as received already; this is for what came by other ways, a push or REST).
    public func received(_ conversation: UUID, upTo sequence: Int64) async {
        await runner.handle(.send(.received(conversation: conversation, sequence: sequence)))
    }

    /// The person types (told to the others at most once every 3 s, however often sent).
    public func typing(in conversation: UUID) async { await runner.handle(.send(.typing(conversation: conversation))) }

    /// A conversation the app loaded: its people and receipts, so that statuses start from them.
    public func track(_ conversation: Conversation) async { await runner.handle(.loaded(conversation)) }

    /// The state now (for a status line).
    public var state: SessionMachine.State { get async { await runner.state } }
}

/// What the runner hands the iterator: an event, or a cursor to keep once the events before it
/// were handled.
enum LiveItem: Sendable {
    case event(LiveEvent)
    case handled(cursor: String)
}

/// Runs the machine: performs its actions, feeds it what happened.
actor LiveRunner {
    private var machine: SessionMachine
    private let client: HeraldClient
    private let device: String?
    private let outbox: Outbox?
    private let continuation: AsyncStream<LiveItem>.Continuation
    private var connection: (id: Int, socket: any WebSocketConnection)?
    private var reader: Task<Void, Never>?

    init(
        machine: SessionMachine, client: HeraldClient, device: String?, outbox: Outbox?,
        continuation: AsyncStream<LiveItem>.Continuation
    ) {
        self.machine = machine
        self.client = client
        self.device = device
        self.outbox = outbox
        self.continuation = continuation
    }

    var state: SessionMachine.State { machine.state }

    func handle(_ input: SessionMachine.Input) async {
        for action in machine.handle(input) { await perform(action) }
    }

    private func perform(_ action: SessionMachine.Action) async {
        switch action {
        case .connect(let id, let after):
            reader = Task { await self.run(id: id, after: after) }
        case .send(let frame):
            try? await connection?.socket.send(text: frame.text)
        case .emit(let event):
            continuation.yield(.event(event))
            if case .connection(.connected) = event, let outbox { await outbox.flush() }
        case .saveCursor(let cursor):
            // Kept when the app comes back for the next event (LiveSession.Iterator).
            continuation.yield(.handled(cursor: cursor))
        case .startTimer(let id, let delay):
            Task {
                try? await Task.sleep(for: delay)
                await self.handle(.timerFired(id: id))
            }
        case .watch(let id, let delay):
            Task {
                try? await Task.sleep(for: delay)
                await self.handle(.watchFired(id: id))
            }
        case .close:
            let socket = connection?.socket
            connection = nil
            await socket?.close(code: 1000)
        case .load(let id):
            let client = client
            Task {
                if let conversation = try? await client.conversation(id) {
                    await self.handle(.loaded(conversation))
                } else {
                    await self.handle(.loadFailed(id))
                }
            }
        case .finish:
            continuation.finish()
            reader?.cancel()
        }
    }

    /// One connection: open, read `hello`, then every frame until it closes.
    private func run(id: Int, after: String?) async {
        let server = client.currentServer
        let socket: any WebSocketConnection
        do {
            socket = try await client.configuration.webSocketTransport.connect(
                to: liveURL(server, after: after), headers: client.credentialHeaders, timeout: client.configuration.timeout)
        } catch WebSocketRefusal.status(let status, let retryAfter, let body) {
            let problem = try? JSONCoding.decoder.decode(Problem.self, from: body)
            await handle(
                .refused(
                    id: id, status: status, retryAfter: retryAfter, field: problem?.errors?.first?.field, detail: problem?.detail ?? "HTTP \(status)")
            )
            return
        } catch {
            client.moveOn(from: server)
            await handle(.unreachable(id: id))
            return
        }
        guard case .text(let text) = try? await socket.receive(), case .hello(let hello)? = ServerFrame.parse(text) else {
            await socket.close(code: 1002)
            await handle(.closed(id: id, code: 1006))
            return
        }
        connection = (id, socket)
        await handle(.opened(id: id, hello))
        while machine.connectionID == id, machine.state.isOpen {
            let incoming = (try? await socket.receive()) ?? .closed(code: 1006)
            switch incoming {
            case .text(let text):
                guard let frame = ServerFrame.parse(text) else { continue }
                await handle(.frame(id: id, frame))
            case .closed(let code):
                if connection?.id == id { connection = nil }
                await handle(.closed(id: id, code: code))
                return
            }
        }
        // The machine moved on (stopped, or a new connection): this one is not needed.
        if connection?.id == id { connection = nil }
        await socket.close(code: 1000)
    }

    /// `ws(s)://server/v1/live?after=…&device=…`.
    private func liveURL(_ server: URL, after: String?, base path: String = "/v1/live") -> URL {
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.scheme = components.scheme?.lowercased() == "https" ? "wss" : "ws"
        components.path = path
        var items: [URLQueryItem] = []
        if let after { items.append(URLQueryItem(name: "after", value: after)) }
        if let device { items.append(URLQueryItem(name: "device", value: device)) }
        components.percentEncodedQuery = items.isEmpty ? nil : items.map { "\($0.name)=\(escaped($0.value ?? ""))" }.joined(separator: "&")
        return components.url ?? server
    }
}
