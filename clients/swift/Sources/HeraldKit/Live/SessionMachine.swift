import Foundation

/// The live session's decisions, and nothing else: inputs (what the socket, the timer and the
/// app said) in, actions (connect, send, hand the app an event, save the cursor, wait) out.
/// No I/O and no clock: `LiveSession` runs it; tests drive it by hand.
struct SessionMachine: Sendable {
    typealias State = LiveSessionState

    enum Input: Sendable, Equatable {
        case start
        /// Connection `id` is open and said `hello`.
        case opened(id: Int, ServerFrame.Hello)
        /// Connection `id` was refused with an HTTP status (its problem document, when the
        /// transport could read it: `field` is the first field a 422 names).
        case refused(id: Int, status: Int, retryAfter: Int?, field: String? = nil, detail: String = "")
        /// Connection `id` could not reach the server.
        case unreachable(id: Int)
        /// Connection `id` was refused for its token (401, or closed with 4401), and the app's
        /// token provider gave another: connect again at once.
        case credentialRenewed(id: Int)
        /// A frame came on connection `id`.
        case frame(id: Int, ServerFrame)
        /// Connection `id` closed (1006: broke without a close frame).
        case closed(id: Int, code: Int)
        case timerFired(id: Int)
        /// The watch on connection `id`'s silence (`Action.watch`) is due.
        case watchFired(id: Int)
        /// The app says the network came back (or changed): connect now.
        case networkAvailable
        /// The app attached another device to the session: the server hears of it on a new
        /// connection (the one open now, or being opened, spoke for the old one).
        case deviceChanged
        case foreground(Bool)
        case view(UUID?)
        case subscribe([String])
        /// A conversation as loaded over REST (after `Action.load`, or given by the app).
        case loaded(Conversation)
        /// Loading it failed: the next event of that conversation tries again.
        case loadFailed(UUID)
        /// Messages of a conversation the app loaded over REST with their receipts.
        case loadedMessages(conversation: UUID, [Message])
        /// The presence of conversation peers, as REST read it for connection `id`.
        case presenceFound(id: Int, [Presence])
        /// The app sends a receipt or typing.
        case send(ClientFrame)
        case stop
    }

    enum Action: Sendable, Equatable {
        /// Open connection `id`, resuming after `cursor`.
        case connect(id: Int, after: String?)
        case send(ClientFrame)
        case emit(LiveEvent)
        case saveCursor(String)
        /// Fire `timerFired(id)` after `delay`.
        case startTimer(id: Int, delay: Duration)
        /// Fire `watchFired(id)` (the connection's id) after `delay`.
        case watch(id: Int, delay: Duration)
        /// Close the open connection (code 1000).
        case close
        /// Load a conversation over REST, then input `loaded`.
        case load(UUID)
        /// Read these people's presence over REST for connection `id`, then input `presenceFound`.
        case lookUpPresence(id: Int, [String])
        /// The event sequence ends.
        case finish
    }

    private(set) var state: State = .idle
    /// The last durable frame's cursor handed to the app (or `hello`'s, first).
    private(set) var cursor: String?
    let backoff: Backoff
    private let jitter: @Sendable () -> Double
    /// The connection the machine speaks of now; inputs of older ones are ignored.
    private(set) var connectionID = 0
    private var timerID = 0
    private var helloCursor: String?
    /// Cursors handed to the app lately, when they are not numbers (they are opaque).
    private var recent: [String] = []
    // What the server must be told again after each reconnect.
    private var viewing: UUID??
    private var foreground: Bool?
    private var subscription: [String]?
    private var books: [UUID: StatusBook] = [:]
    // The silence watch: a connection that says nothing for a heartbeat is pinged; one that
    // answers nothing for another is given up (a half-open socket: a phone that changed networks).
    private var heartbeat: Duration = .seconds(15)
    private var heard = false
    private var pinged = false
    private var loading: Set<UUID> = []
    // Conversation peers whose presence this connection looked up, and those it heard of since.
    private var lookedUp: Set<String> = []
    private var heardPresence: Set<String> = []
    /// Conversations and messages the app loaded before the first connection (`loaded`, `loadedMessages`).
    private var earlyConversations: [UUID: Conversation] = [:]
    private var early: [UUID: [Message]] = [:]

    init(cursor: String?, backoff: Backoff = Backoff(), jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.cursor = cursor
        self.backoff = backoff
        self.jitter = jitter
    }

    mutating func handle(_ input: Input) -> [Action] {
        if case .ended = state { return [] }
        switch input {
        case .start:
            guard state == .idle else { return [] }
            return connect(attempt: 0)
        case .opened(let id, let hello):
            guard id == connectionID, case .connecting = state else { return [] }
            return opened(hello)
        case .refused(let id, let status, let retryAfter, let field, let detail):
            guard id == connectionID, case .connecting(let attempt) = state else { return [] }
            switch status {
            case 401: return end(.unauthorized)
            case 422 where field == "after":
                // A cursor the server does not know (another deployment's, a damaged file):
                // start from now, and the app reloads.
                cursor = nil
                recent = []
                return [.emit(.resync(reason: "cursor_refused"))] + connect(attempt: attempt)
            case 408, 429, 500...599:
                return wait(attempt: attempt, closeCode: nil, atLeast: retryAfter.map { .seconds($0) })
            default:
                // Asking again would get the same answer (a device that is not the person's, a
                // tenant key without Herald-On-Behalf-Of, a proxy that does not upgrade).
                return end(.refused(status: status, detail: detail))
            }
        case .unreachable(let id):
            guard id == connectionID, case .connecting(let attempt) = state else { return [] }
            return wait(attempt: attempt, closeCode: nil)
        case .credentialRenewed(let id):
            guard id == connectionID else { return [] }
            switch state {
            // Once at once; a new token refused again waits as any failed attempt does.
            case .connecting(let attempt): return attempt == 0 ? connect(attempt: 1) : wait(attempt: attempt, closeCode: nil)
            case .open: return connect(attempt: 0)
            default: return []
            }
        case .frame(let id, let frame):
            guard id == connectionID, case .open = state else { return [] }
            return received(frame)
        case .closed(let id, let code):
            guard id == connectionID else { return [] }
            if code == 4401, state.isOpen || state.isConnecting { return end(.unauthorized) }
            switch state {
            // A connection that was open starts the count again; one that never opened goes on with it.
            case .open: return wait(attempt: 0, closeCode: code)
            case .connecting(let attempt): return wait(attempt: attempt, closeCode: code)
            default: return []
            }
        case .timerFired(let id):
            guard id == timerID, case .waiting(let attempt) = state else { return [] }
            return connect(attempt: attempt)
        case .watchFired(let id):
            guard id == connectionID, state.isOpen else { return [] }
            return watch()
        case .networkAvailable:
            switch state {
            case .waiting(let attempt):
                timerID += 1
                return connect(attempt: attempt)
            case .open:
                // The old connection may be dead without knowing it: a new one, with the cursor.
                return [.close] + connect(attempt: 0)
            default: return []
            }
        case .deviceChanged:
            switch state {
            case .open: return [.close] + connect(attempt: 0)
            case .connecting(let attempt): return connect(attempt: attempt)
            case .waiting(let attempt):
                timerID += 1
                return connect(attempt: attempt)
            case .idle, .ended: return []
            }
        case .foreground(let value):
            foreground = value
            var actions: [Action] = []
            if case .open = state { actions.append(.send(.foreground(value))) }
            if value, case .waiting(let attempt) = state {
                timerID += 1
                actions += connect(attempt: attempt)
            }
            return actions
        case .view(let conversation):
            viewing = .some(conversation)
            return sendIfOpen(.viewing(conversation))
        case .subscribe(let people):
            subscription = people
            return sendIfOpen(.subscribe(people))
        case .loaded(let conversation):
            loading.remove(conversation.id)
            // Before the first connection says who the person is, it waits for it.
            guard let me = person else {
                earlyConversations[conversation.id] = conversation
                return []
            }
            var book = books[conversation.id] ?? StatusBook(me: me)
            let changes = book.apply(conversation)
            books[conversation.id] = book
            return emit(changes, in: conversation.id) + lookUpPeers()
        case .presenceFound(let id, let people):
            guard id == connectionID, state.isOpen else { return [] }
            // What a frame told since the look-up began is newer than what it read.
            let snapshot = people.filter { !heardPresence.contains($0.person.lowercased()) }
            return snapshot.isEmpty ? [] : [.emit(.presence(snapshot))]
        case .loadFailed(let conversation):
            loading.remove(conversation)
            return []
        case .loadedMessages(let conversation, let messages):
            // Before the first connection says who the person is, they wait for it.
            guard person != nil else {
                early[conversation, default: []] += messages
                return []
            }
            return track(messages, in: conversation)
        case .send(let frame):
            return sendIfOpen(frame)
        case .stop:
            return (state.isOpen ? [Action.close] : []) + end(.stopped)
        }
    }

    /// The person the session speaks for, once a connection said so.
    private(set) var person: String?

    private mutating func connect(attempt: Int) -> [Action] {
        connectionID += 1
        state = .connecting(attempt: attempt)
        return [.emit(.connection(.connecting)), .connect(id: connectionID, after: cursor)]
    }

    private mutating func opened(_ hello: ServerFrame.Hello) -> [Action] {
        state = .open(person: hello.person)
        person = hello.person
        helloCursor = hello.cursor
        heartbeat = .seconds(max(hello.heartbeat, 1))
        (heard, pinged) = (false, false)
        var actions: [Action] = [.watch(id: connectionID, delay: heartbeat)]
        if cursor == nil {
            cursor = hello.cursor
            actions.append(.saveCursor(hello.cursor))
        }
        actions.append(.emit(.connection(.connected(person: hello.person))))
        // What the server forgot with the last connection.
        if let viewing { actions.append(.send(.viewing(viewing))) }
        if let foreground { actions.append(.send(.foreground(foreground))) }
        if let subscription { actions.append(.send(.subscribe(subscription))) }
        for conversation in earlyConversations.values.sorted(by: { $0.id.uuidString < $1.id.uuidString }) {
            var book = books[conversation.id] ?? StatusBook(me: hello.person)
            actions += emit(book.apply(conversation), in: conversation.id)
            books[conversation.id] = book
        }
        earlyConversations = [:]
        for (conversation, messages) in early.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            actions += track(messages, in: conversation)
        }
        early = [:]
        (lookedUp, heardPresence) = ([], [])
        return actions + lookUpPeers()
    }

    /// Looks up the presence of the known conversations' people not looked up on this
    /// connection yet: the server tells their changes, not their state when a socket opens (a
    /// subscription's people it answers itself). At most 100 at once, as REST takes.
    private mutating func lookUpPeers() -> [Action] {
        guard state.isOpen else { return [] }
        let followed = Set((subscription ?? []).map { $0.lowercased() })
        let peers = Set(books.values.flatMap { $0.others ?? [] }).subtracting(lookedUp).subtracting(followed).sorted().prefix(100)
        guard !peers.isEmpty else { return [] }
        lookedUp.formUnion(peers)
        return [.lookUpPresence(id: connectionID, Array(peers))]
    }

    /// Follows the statuses of the person's own `messages` of `conversation` (loaded over REST),
    /// loading the conversation when its people are not known yet.
    private mutating func track(_ messages: [Message], in conversation: UUID) -> [Action] {
        guard let me = person else { return [] }
        var book = books[conversation] ?? StatusBook(me: me)
        let changes = book.record(loaded: messages)
        books[conversation] = book
        var actions = emit(changes, in: conversation)
        if book.others == nil, !loading.contains(conversation) {
            loading.insert(conversation)
            actions.append(.load(conversation))
        }
        return actions
    }

    private mutating func received(_ frame: ServerFrame) -> [Action] {
        heard = true
        switch frame {
        case .hello: return []
        case .ephemeral(let event):
            if case .presence(let people)? = event { heardPresence.formUnion(people.map { $0.person.lowercased() }) }
            return event.map { [.emit($0)] } ?? []
        case .resync(let reason):
            // Go on from hello's cursor once the app reloaded.
            var actions: [Action] = []
            if let helloCursor {
                cursor = helloCursor
                recent = []
                actions.append(.saveCursor(helloCursor))
            }
            return actions + [.emit(.resync(reason: reason))]
        case .durable(let frameCursor, let event):
            guard isNew(frameCursor) else { return [] }
            cursor = frameCursor
            if Int64(frameCursor) == nil {
                recent.append(frameCursor)
                if recent.count > 1_024 { recent.removeFirst(recent.count - 1_024) }
            }
            return [.emit(event), .saveCursor(frameCursor)] + statuses(after: event)
        }
    }

    /// Not handed to the app before: after the last cursor when cursors are numbers (as
    /// Herald's are), otherwise not among the recent ones.
    private func isNew(_ candidate: String) -> Bool {
        if let last = cursor.flatMap({ Int64($0) }), let value = Int64(candidate) { return value > last }
        return candidate != cursor && !recent.contains(candidate)
    }

    /// The status changes a durable event makes, and a conversation to load to know its people.
    private mutating func statuses(after event: LiveEvent) -> [Action] {
        guard let me = person else { return [] }
        let conversation: UUID
        let changes: [StatusBook.Change]
        switch event {
        case .message(let id, let message):
            conversation = id
            var book = books[id] ?? StatusBook(me: me)
            changes = book.record(message)
            books[id] = book
        case .receipt(let receipt):
            conversation = receipt.conversation
            var book = books[conversation] ?? StatusBook(me: me)
            changes = book.apply(receipt)
            books[conversation] = book
        case .conversation(let value):
            conversation = value.id
            var book = books[conversation] ?? StatusBook(me: me)
            changes = book.apply(value)
            books[conversation] = book
        default:
            return []
        }
        var actions = emit(changes, in: conversation)
        if books[conversation]?.others == nil, !loading.contains(conversation) {
            loading.insert(conversation)
            actions.append(.load(conversation))
        }
        return actions
    }

    private func emit(_ changes: [StatusBook.Change], in conversation: UUID) -> [Action] {
        changes.map { .emit(.status(conversation: conversation, message: $0.message, sequence: $0.sequence, status: $0.status)) }
    }

    /// A heartbeat passed: quiet once, ping; quiet again after the ping, give the connection up.
    private mutating func watch() -> [Action] {
        defer { heard = false }
        if heard {
            pinged = false
            return [.watch(id: connectionID, delay: heartbeat)]
        }
        if !pinged {
            pinged = true
            return [.send(.ping), .watch(id: connectionID, delay: heartbeat)]
        }
        return [.close] + wait(attempt: 0, closeCode: nil)
    }

    private mutating func wait(attempt: Int, closeCode: Int?, atLeast floor: Duration? = nil) -> [Action] {
        var delay = backoff.delay(attempt: attempt, jitter: jitter())
        if let floor, floor > delay { delay = floor }
        timerID += 1
        state = .waiting(attempt: attempt + 1)
        return [.emit(.connection(.waiting(retryIn: delay, closeCode: closeCode))), .startTimer(id: timerID, delay: delay)]
    }

    private mutating func end(_ reason: EndReason) -> [Action] {
        state = .ended(reason)
        timerID += 1
        return [.emit(.connection(.ended(reason))), .finish]
    }

    private func sendIfOpen(_ frame: ClientFrame) -> [Action] {
        state.isOpen ? [.send(frame)] : []
    }
}

extension SessionMachine.State {
    var isOpen: Bool { if case .open = self { true } else { false } }
    var isConnecting: Bool { if case .connecting = self { true } else { false } }
}
