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
///
/// Every `for await` over the session (or over `events()`) is a stream of its own, with every
/// event from the moment it starts: a chat screen and a badge can both listen, and one that
/// stops stops nothing else. Events that come while nobody listens wait for the next loop.
/// Each stream buffers without limit, so a screen that stops reading should leave its loop.
public final class LiveSession: AsyncSequence, Sendable {
    public typealias Element = LiveEvent
    private let runner: LiveRunner
    private let hub: LiveEventHub

    /// - Parameters:
    ///   - device: this phone's push token (or installation id), registered before: while the
    ///     app says it is in the foreground, chat pushes to this phone are skipped (it shows them).
    ///   - outbox: sent again as soon as a connection opens (the server is reachable).
    public init(
        client: HeraldClient, cursorStore: any CursorStore, device: String? = nil, outbox: Outbox? = nil, backoff: Backoff = Backoff()
    ) {
        hub = LiveEventHub(store: cursorStore)
        let machine = SessionMachine(cursor: cursorStore.load(), backoff: backoff)
        runner = LiveRunner(machine: machine, client: client, device: device, outbox: outbox, hub: hub)
    }

    /// A session the app let go of closes its socket.
    deinit {
        let runner = runner
        Task { await runner.handle(.stop) }
    }

    /// A new stream of the events, from now on (and what waited for a listener).
    public func makeAsyncIterator() -> Iterator {
        let (id, stream) = hub.subscribe()
        return Iterator(base: stream.makeAsyncIterator(), hub: hub, id: id)
    }

    /// The events as a stream of their own: the same as iterating the session.
    public func events() -> Events { Events(session: self) }

    /// `events()`: each iteration a stream of its own.
    public struct Events: AsyncSequence, Sendable {
        public typealias Element = LiveEvent
        let session: LiveSession
        public func makeAsyncIterator() -> Iterator { session.makeAsyncIterator() }
    }

    /// Hands over one stream's events. A frame's cursor is saved once every stream that got
    /// it has asked for the next event, that is once they handled the frame: an app that ends
    /// while handling one gets it again after its restart, and none is skipped.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<LiveEventHub.Item>.Iterator
        let hub: LiveEventHub
        let id: Int

        public mutating func next() async -> LiveEvent? {
            while let item = await base.next() {
                switch item {
                case .event(let event): return event
                case .handled(let mark): hub.acknowledge(id, mark: mark)
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

    /// This phone's push token (or installation id), once it is registered (iOS hands the
    /// APNs token over after launch): the session reconnects to speak for it, resuming after
    /// its cursor, so that chat pushes to it are skipped while the app is in the foreground.
    /// `nil` speaks for no device again.
    public func attach(device: String?) async { await runner.attach(device: device) }

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

    /// Messages the app loaded over REST with their receipts (`messages(in:receipts: true)`,
    /// after a restart, or a chat opened from a push): the person's own are followed from the
    /// status the page gave them, and `.status` events move their ticks as receipts come.
    public func track(_ messages: [Message], in conversation: UUID) async {
        await runner.handle(.loadedMessages(conversation: conversation, messages))
    }

    /// The state now (for a status line).
    public var state: LiveSessionState { get async { await runner.state } }
}

/// Runs the machine: performs its actions, feeds it what happened.
actor LiveRunner {
    private var machine: SessionMachine
    private let client: HeraldClient
    private var device: String?
    private let outbox: Outbox?
    private let hub: LiveEventHub
    private var connection: (id: Int, socket: any WebSocketConnection)?
    private var reader: Task<Void, Never>?

    init(
        machine: SessionMachine, client: HeraldClient, device: String?, outbox: Outbox?, hub: LiveEventHub
    ) {
        self.machine = machine
        self.client = client
        self.device = device
        self.outbox = outbox
        self.hub = hub
    }

    var state: SessionMachine.State { machine.state }

    func attach(device: String?) async {
        guard device != self.device else { return }
        self.device = device
        await handle(.deviceChanged)
    }

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
            hub.yield(event)
            if case .connection(.connected) = event, let outbox { await outbox.flush() }
        case .saveCursor(let cursor):
            // Kept when the app comes back for the next event (LiveSession.Iterator).
            hub.handled(cursor: cursor)
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
        case .lookUpPresence(let id, let people):
            let client = client
            Task {
                if let found = try? await client.presence(of: people) { await self.handle(.presenceFound(id: id, found.people)) }
            }
        case .finish:
            hub.finish()
            reader?.cancel()
        }
    }

    /// One connection: open, read `hello`, then every frame until it closes.
    private func run(id: Int, after: String?) async {
        let server = client.currentServer
        guard let token = try? await client.tokens.current() else {
            await handle(.refused(id: id, status: 401, retryAfter: nil, detail: "no token: the token provider failed"))
            return
        }
        let socket: any WebSocketConnection
        do {
            socket = try await client.configuration.webSocketTransport.connect(
                to: liveURL(server, after: after), headers: client.credentialHeaders(token: token), timeout: client.configuration.timeout)
        } catch WebSocketRefusal.status(let status, let retryAfter, let body) {
            if status == 401, await renewed(token, connection: id) { return }
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
                if code == 4401, await renewed(token, connection: id) { return }
                await handle(.closed(id: id, code: code))
                return
            }
        }
        // The machine moved on (stopped, or a new connection): this one is not needed.
        if connection?.id == id { connection = nil }
        await socket.close(code: 1000)
    }

    /// Whether the token provider replaced `token`, refused on connection `id`: if so, the
    /// machine connects again at once with the new one.
    private func renewed(_ token: String, connection id: Int) async -> Bool {
        guard client.tokens.renews, let renewed = try? await client.tokens.renew(refused: token), renewed != token else { return false }
        await handle(.credentialRenewed(id: id))
        return true
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
