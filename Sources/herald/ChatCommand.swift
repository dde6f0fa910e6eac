import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore

struct ChatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat",
        abstract: "Direct and group conversations inside a team.",
        discussion: """
            Only participants may send, read or see a conversation; only people of its team may be added. \
            Creating a group, adding, removing, leaving and renaming leave a system message that notifies nobody.
            """,
        subcommands: [
            Create.self, Send.self, Add.self, Remove.self, Leave.self, Rename.self, Read.self, Mute.self, Unmute.self, Viewing.self,
            List.self, Show.self
        ])

    /// `CONV` plus who acts, in which tenant, and how to print.
    struct Target: ParsableArguments {
        @Argument(help: "The conversation's id.") var conversation: String
        @OptionGroup var actor: ActorOptions
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        /// The conversation's id, parsed.
        func id() throws -> UUID { try Input.id(conversation, field: "conversation") }

        func change(_ change: TenantSession.ConversationChange, done: String) async throws {
            let actor = try actor.email()
            let id = try id()
            let record = try await withTenant(tenant) { try await $0.changeConversation(actor: actor, conversation: id, change) }
            if options.json { return try printJSON(record) }
            print(done)
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a conversation (direct with one person, a group with two or more); prints its id.")

        @Option(help: "Who else takes part: emails, comma-separated.") var with: String
        @Option(help: "The group's name (groups only).") var name: String?
        @Option(help: "The group's photo URL (groups only; shown on notifications).") var photo: String?
        @Option(help: "The team it belongs to (default: the one team everyone is in).") var team: String?
        @OptionGroup var actor: ActorOptions
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let actor = try actor.email()
            let others = with.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let record = try await withTenant(tenant) {
                try await $0.createConversation(actor: actor, with: others, name: name, photoURL: photo, team: team)
            }
            if options.json { return try printJSON(record) }
            print(record.id.text)
        }
    }

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send a message; prints its id.")

        @Argument(help: "The conversation's id.") var conversation: String
        @Option(help: "The message (up to 1,000 characters).") var text: String
        @Option(name: .customLong("client-id"), help: "The app's own id for it: sending the same one again stores and notifies once.")
        var clientID: String?
        @Option(name: .customLong("sent-at"), help: "When the device sent it (ISO 8601), for messages synced late.") var sentAt: String?
        @OptionGroup var actor: ActorOptions
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        struct Output: Encodable {
            let message: MessageRecord
            let created: Bool
        }

        func run() async throws {
            let actor = try actor.email()
            let sentAt = try sentAt.map { try Input.timestamp($0, field: "--sent-at") }
            let conversation = try Input.id(conversation, field: "conversation")
            let (message, created) = try await withTenant(tenant) {
                try await $0.sendMessage(actor: actor, conversation: conversation, text: text, clientID: clientID, sentAt: sentAt)
            }
            if options.json { return try printJSON(Output(message: message, created: created)) }
            print(message.id.text + (created ? "" : " (already sent with this client id; nobody notified again)"))
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add someone of the team to a group.")
        @OptionGroup var target: Target
        @Argument(help: "Their email.") var email: String
        func run() async throws { try await target.change(.add(email: email), done: "added \(email)") }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove someone from a group.")
        @OptionGroup var target: Target
        @Argument(help: "Their email.") var email: String
        func run() async throws { try await target.change(.remove(email: email), done: "removed \(email)") }
    }

    struct Leave: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Leave a group.")
        @OptionGroup var target: Target
        func run() async throws { try await target.change(.leave, done: "left") }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a group.")
        @Option(help: "The new name.") var name: String
        @OptionGroup var target: Target
        func run() async throws { try await target.change(.rename(name), done: "renamed to \(name)") }
    }

    struct Read: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Mark everything in a conversation read (lowers the badge).")
        @OptionGroup var target: Target
        func run() async throws { try await target.change(.read, done: "read") }
    }

    struct Mute: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Notifications of this conversation arrive without sound.")
        @OptionGroup var target: Target
        func run() async throws { try await target.change(.mute(true), done: "muted") }
    }

    struct Unmute: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Notifications of this conversation make a sound again.")
        @OptionGroup var target: Target
        func run() async throws { try await target.change(.mute(false), done: "unmuted") }
    }

    struct Viewing: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Say the conversation is open on your device: no push for it while that holds (renew before it ends).")
        @Option(name: .customLong("for"), help: "How long (default 60s, at most 1h).") var duration = "60s"
        @OptionGroup var target: Target
        func run() async throws {
            let duration = try Input.duration(duration, field: "for")
            try await target.change(.viewing(for: duration), done: "viewing for \(self.duration)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Your conversations, most recently active first.")
        @OptionGroup var actor: ActorOptions
        @OptionGroup var tenant: TenantOptions
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let actor = try actor.email()
            let conversations = try await withTenant(tenant) { try await $0.conversations(viewer: actor) }
            if options.json { return try printJSON(conversations) }
            var table = TextTable("ID", "KIND", "NAME", "TEAM", "PEOPLE", "UNREAD")
            for conversation in conversations {
                let name =
                    conversation.name
                    ?? conversation.participants.filter { $0.person.email != actor }.map(\.person.name).joined(separator: ", ")
                table.add(
                    conversation.id.text, conversation.kind.rawValue, name, conversation.team.slug, "\(conversation.participants.count)",
                    "\(conversation.unread)")
            }
            print(table.render(empty: "no conversations"))
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A conversation's latest messages (with --receipts: delivered to, read by).")
        @Flag(help: "Per message, who got the push and who has read it.") var receipts = false
        @Option(help: "At most this many messages (default 100).") var limit = 100
        @OptionGroup var target: Target

        struct Output: Encodable {
            let conversation: ConversationRecord
            let messages: [MessageRecord]
        }

        func run() async throws {
            let actor = try target.actor.email()
            guard (1...1000).contains(limit) else { throw InputError("limit must be between 1 and 1000") }
            let id = try target.id()
            let (conversation, messages) = try await withTenant(target.tenant) {
                try await $0.conversationDetail(viewer: actor, conversation: id, receipts: receipts, limit: limit)
            }
            if target.options.json { return try printJSON(Output(conversation: conversation, messages: messages)) }
            let people = conversation.participants.map { $0.person.name + ($0.muted ? " (muted)" : "") }.joined(separator: ", ")
            printFields([
                ("conversation", conversation.id.text), ("kind", conversation.kind.rawValue), ("name", conversation.name ?? "-"),
                ("team", conversation.team.slug), ("people", people), ("unread", "\(conversation.unread)")
            ])
            print("")
            for message in messages {
                let who = message.isSystem ? "·" : message.sender.name + ":"
                var line = "\(message.sentAt.shortDisplay)  \(who) \(message.text)"
                if receipts, !message.isSystem {
                    line +=
                        "  [delivered: \(message.deliveredTo?.joined(separator: ", ") ?? "-"); read: \(message.readBy?.joined(separator: ", ") ?? "-")]"
                }
                print(line)
            }
        }
    }
}
