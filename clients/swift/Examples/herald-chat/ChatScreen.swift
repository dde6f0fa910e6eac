import Foundation
import HeraldKit

/// What herald-chat shows and does: the conversations, the open one, commands.
actor ChatScreen {
    let client: HeraldClient
    let session: LiveSession
    let outbox: Outbox
    let me: String
    var conversations: [Conversation] = []
    var open: Conversation?
    var statuses: [String: MessageStatus] = [:]

    /// The conversations as last listed, for a start without the server.
    let kept: URL

    init(client: HeraldClient, session: LiveSession, outbox: Outbox, me: String, state: URL) {
        self.client = client
        self.session = session
        self.outbox = outbox
        self.me = me
        kept = state.appendingPathComponent("conversations.json")
    }

    func listConversations() async {
        do {
            do {
                conversations = try await client.conversations()
                try? JSONEncoder().encode(conversations).write(to: kept, options: .atomic)
            } catch let error as HeraldError where error.isTransient {
                guard let data = try? Data(contentsOf: kept) else { throw error }
                conversations = try JSONDecoder().decode([Conversation].self, from: data)
            }
            for (index, conversation) in conversations.enumerated() {
                say("  \(index + 1). \(title(conversation))\(conversation.unread > 0 ? " (\(conversation.unread) unread)" : "")")
            }
            if conversations.isEmpty { say("  no conversations yet: /new EMAIL") }
        } catch {
            say("! \(error)")
        }
    }

    func handle(_ line: String) async {
        let words = line.split(separator: " ", maxSplits: 1).map(String.init)
        switch words.first {
        case nil: return
        case "/help":
            say("/list · /open N · /new EMAIL[,EMAIL…] [NAME] · /who · /older · /inbox [read] · /quit · anything else is sent")
        case "/list": await listConversations()
        case "/open":
            guard let number = words.dropFirst().first.flatMap(Int.init), conversations.indices.contains(number - 1) else {
                say("! /open N, N from /list")
                return
            }
            await openConversation(conversations[number - 1])
        case "/new":
            let parts = (words.dropFirst().first ?? "").split(separator: " ", maxSplits: 1).map(String.init)
            guard let people = parts.first?.split(separator: ",").map(String.init), !people.isEmpty else {
                say("! /new EMAIL[,EMAIL…] [NAME]")
                return
            }
            do {
                let conversation = try await client.createConversation(with: people, name: parts.dropFirst().first)
                conversations.append(conversation)
                await openConversation(conversation)
            } catch { say("! \(error)") }
        case "/who":
            guard let open else { return say("! /open a conversation first") }
            let people = open.participants.map(\.person.email).filter { $0 != me }
            if let list = try? await client.presence(of: people) {
                for entry in list.people { say("  \(entry.online ? "●" : "○") \(entry.person)\(entry.lastSeen.map { ", last seen \($0)" } ?? "")") }
            }
        case "/older":
            guard let open else { return say("! /open a conversation first") }
            await showMessages(open, before: oldestShown)
        case "/inbox": await showInbox(markRead: words.dropFirst().first == "read")
        case "/quit": exit(0)
        default:
            guard let open else { return say("! /open a conversation first") }
            await session.typing(in: open.id)
            do {
                let pending = try await outbox.send(text: line, to: open.id)
                statuses[pending.clientId] = .pending
                say("  \(tick[.pending] ?? "") \(line)")
            } catch { say("! \(error)") }
        }
    }

    var oldestShown: Int64?
    /// The outbox's token was refused: what it holds cannot go.
    var refused = false

    func openConversation(_ conversation: Conversation) async {
        open = conversation
        say("== \(title(conversation))")
        await session.track(conversation)
        await session.view(conversation.id)
        // Follow the people of a large group too (the server tells a small one's by itself).
        await session.subscribe(to: conversation.participants.map(\.person.email).filter { $0 != me }.prefix(100).map { $0 })
        await showMessages(conversation, before: nil)
    }

    func showMessages(_ conversation: Conversation, before: Int64?) async {
        do {
            let messages = try await client.messages(in: conversation.id, limit: 20, before: before, receipts: true)
            oldestShown = messages.first?.sequence ?? oldestShown
            for message in messages { say(line(message, status: message.status)) }
            // Their ticks move on as receipts come, from where the page left them.
            await session.track(messages, in: conversation.id)
            if let last = messages.last { await session.read(conversation.id, upTo: last.sequence) }
        } catch { say("! \(error)") }
    }

    /// The inbox's first page, newest first (`•` unread), and its counts; `read` marks it all read.
    func showInbox(markRead: Bool) async {
        do {
            if markRead {
                let change = try await client.inbox.mark(.read, allBefore: Date())
                say("-- \(change.ids.count) read; badge \(change.badge ?? 0)")
                return
            }
            let counts = try await client.inbox.counts()
            say("== inbox: \(counts.unread) unread (\(counts.unseen) new), badge \(counts.badge)")
            for item in try await client.inbox.page(limit: 10).items {
                let now = item.activity.map { " [\($0.status)\(item.actions.isEmpty ? "" : ": " + item.actions.joined(separator: ", "))]" } ?? ""
                say("  \(item.isUnread ? "•" : " ") \(item.title): \(item.body)\(now)")
            }
        } catch { say("! \(error)") }
    }

    func show(_ event: LiveEvent) async {
        switch event {
        case .connection(let state):
            switch state {
            case .connected: say("-- live")
            case .waiting(let delay, let code):
                say(
                    "-- away\(code.map { " (\($0))" } ?? ""), again in \(delay.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1))))"
                )
            case .ended(let reason): say("-- ended: \(reason)")
            case .connecting: break
            }
        case .message(let conversation, let message):
            let mine = message.sender.email == me
            if conversation == open?.id {
                say(line(message, status: mine ? .sent : nil))
                if !mine { await session.read(conversation, upTo: message.sequence) }
            } else if !mine {
                say("[\(conversations.first { $0.id == conversation }.map(title) ?? "new conversation")] \(message.sender.name): \(message.text)")
            }
        case .status(_, _, let sequence, let status):
            say("  #\(sequence) \(tick[status] ?? "")")
        case .typing(let conversation, let person) where conversation == open?.id:
            say("  … \(person) is typing")
        case .presence(let people):
            for entry in people { say("  \(entry.online ? "●" : "○") \(entry.person) \(entry.online ? "online" : "offline")") }
        case .conversation(let conversation):
            conversations.removeAll { $0.id == conversation.id }
            conversations.append(conversation)
        case .resync:
            say("-- away too long: reloading")
            await listConversations()
        case .refused(let code, let detail):
            say("! \(code): \(detail)")
        case .inboxItem(let item):
            say("[inbox] \(item.title): \(item.body)")
        case .badge(let badge):
            say("-- badge \(badge)")
        default: break
        }
    }

    func show(_ outcome: OutboxEvent) async {
        switch outcome {
        case .sent(let pending, let message): say("  \(tick[.sent] ?? "") #\(message.sequence) \(pending.text)")
        case .failed(let pending, let error): say("! not sent: \(pending.text): \(error)")
        case .unauthorized:
            refused = true
            say("! the token was refused: sign in again")
        }
    }

    func title(_ conversation: Conversation) -> String {
        conversation.name ?? conversation.participants.filter { $0.person.email != me }.map(\.person.name).joined(separator: ", ")
    }

    func line(_ message: Message, status: MessageStatus?) -> String {
        let ticks = message.sender.email == me ? " \(tick[status ?? .sent] ?? "")" : ""
        return "#\(message.sequence) \(message.sender.name): \(message.text)\(ticks)"
    }
}
