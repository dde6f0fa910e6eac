import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

extension HeraldAPI {
    struct ConversationBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["with", "name", "photo", "team"]
        let with: [String]
        let name: String?
        let photo: String?
        let team: String?
    }

    struct MessageBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["text", "clientId", "sentAt"]
        let text: String
        let clientId: String?
        let sentAt: String?
    }

    struct RenameBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["name"]
        let name: String
    }

    struct ViewingBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["seconds"]
        let seconds: Int
    }

    struct ConversationDetail: Encodable {
        let conversation: ConversationRecord
        let messages: [MessageRecord]
    }

    /// Chat as a participant sees it; a conversation the caller is not in is not found.
    func addConversations(to group: RouterGroup<APIContext>) {
        group.get("conversations") { _, context in
            let (caller, actor) = try Self.person(context)
            let conversations = try await store.withTenant(caller.tenant) { try await $0.conversations(viewer: actor.email) }
            return try JSONBody.response(["items": conversations])
        }

        group.post("conversations") { request, context in
            try await creating(request, context) { caller, bytes in
                let actor = try caller.actor()
                let body = try JSONBody.decode(ConversationBody.self, bytes: bytes, request: request)
                let others = try body.with.enumerated().map { index, email in try field("with[\(index)]") { try Input.email(email) } }
                let conversation = try await store.withTenant(caller.tenant) {
                    try await $0.createConversation(actor: actor.email, with: others, name: body.name, photoURL: body.photo, team: body.team)
                }
                return try JSONBody.answer(
                    conversation, status: .created, headers: [.location: "/v1/conversations/\(conversation.id.lowercasedString)"])
            }
        }

        group.get("conversations/:id") { _, context in
            let (caller, actor) = try Self.person(context)
            let id = try Self.conversationID(context)
            let (conversation, _) = try await store.withTenant(caller.tenant) {
                try await $0.conversationDetail(viewer: actor.email, conversation: id, receipts: false, limit: 1)
            }
            return try JSONBody.response(conversation)
        }

        group.patch("conversations/:id") { request, context in
            let body = try await JSONBody.decode(RenameBody.self, from: request, context: context)
            return try await change(context, .rename(body.name))
        }

        group.get("conversations/:id/messages") { request, context in
            let (caller, actor) = try Self.person(context)
            let id = try Self.conversationID(context)
            let limit = try field("limit") { try Paging.limit(request.uri.queryParameters.get("limit")) }
            let receipts = request.uri.queryParameters.get("receipts") == "true"
            // The page before a sequence: scrolling back from the oldest message shown.
            let before = try request.uri.queryParameters.get("before").map { text in
                guard let sequence = Int64(text), sequence >= 1 else {
                    throw Problem(
                        .unprocessableContent, "Invalid fields", detail: "before is a message's sequence, 1 or more",
                        errors: [.init(field: "before", detail: "a whole number, 1 or more")])
                }
                return sequence
            }
            let (_, messages) = try await store.withTenant(caller.tenant) {
                try await $0.conversationDetail(viewer: actor.email, conversation: id, receipts: receipts, limit: limit, before: before)
            }
            return try JSONBody.response(["items": messages])
        }

        group.post("conversations/:id/messages") { request, context in
            try await creating(request, context) { caller, bytes in
                let actor = try caller.actor()
                let id = try Self.conversationID(context)
                let body = try JSONBody.decode(MessageBody.self, bytes: bytes, request: request)
                let sentAt = try body.sentAt.map { text in try field("sentAt") { try Input.timestamp(text, field: "sentAt") } }
                let (message, created) = try await store.withTenant(caller.tenant) {
                    try await $0.sendMessage(as: actor, conversation: id, text: body.text, clientID: body.clientId, sentAt: sentAt)
                }
                // The same clientId again: the stored message, nobody notified again.
                return try JSONBody.answer(message, status: created ? .created : .ok)
            }
        }

        group.post("conversations/:id/read") { _, context in try await change(context, .read) }
        group.post("conversations/:id/received") { _, context in try await change(context, .received(upTo: nil)) }
        group.put("conversations/:id/mute") { _, context in try await change(context, .mute(true)) }
        group.delete("conversations/:id/mute") { _, context in try await change(context, .mute(false)) }
        group.put("conversations/:id/viewing") { request, context in
            let body = try await JSONBody.decode(ViewingBody.self, from: request, context: context)
            guard (1...3_600).contains(body.seconds) else {
                throw Problem(
                    .unprocessableContent, "Invalid fields", detail: "seconds is from 1 to 3600",
                    errors: [.init(field: "seconds", detail: "from 1 to 3600")])
            }
            return try await change(context, .viewing(for: .seconds(body.seconds)))
        }
        group.post("conversations/:id/leave") { _, context in try await change(context, .leave) }
        group.put("conversations/:id/participants/:email") { _, context in
            try await change(context, .add(email: try context.parameters.decoded("email")))
        }
        group.delete("conversations/:id/participants/:email") { _, context in
            try await change(context, .remove(email: try context.parameters.decoded("email")))
        }
    }

    /// Applies a change as the caller and answers with the conversation as it is now.
    private func change(_ context: APIContext, _ change: TenantSession.ConversationChange) async throws -> Response {
        let (caller, actor) = try Self.person(context)
        let id = try Self.conversationID(context)
        let conversation = try await store.withTenant(caller.tenant) { try await $0.changeConversation(actor: actor.email, conversation: id, change) }
        return try JSONBody.response(conversation)
    }

    static func person(_ context: APIContext) throws -> (Caller, Person) {
        let caller = try context.requireCaller()
        return (caller, try caller.actor())
    }

    static func conversationID(_ context: APIContext) throws -> UUID {
        guard let id = UUID(uuidString: try context.parameters.require("id")) else { throw Problem.notFound("no conversation with this id") }
        return id
    }
}
