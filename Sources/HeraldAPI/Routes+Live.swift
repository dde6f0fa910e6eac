import Foundation
import HeraldCore
import HeraldLive
import HeraldStore
import Hummingbird

extension HeraldAPI {
    struct PresenceListAnswer: Encodable {
        let people: [LiveFrame.PresenceEntry]
        let unknown: [String]
    }

    /// `GET /v1/presence`'s `people`: names separated by commas, at least one and at most
    /// `PresenceFollowing.maxAsked` once repeats are dropped, in at most
    /// `PresenceFollowing.maxAskedLength` scalars.
    static func presenceNames(_ text: String?) throws -> [String] {
        let length = text?.unicodeScalars.count ?? 0
        guard length <= PresenceFollowing.maxAskedLength else {
            throw Problem(
                .unprocessableContent, "Invalid fields",
                detail: "people is \(length) characters long; at most \(PresenceFollowing.maxAskedLength)",
                errors: [.init(field: "people", detail: "at most \(PresenceFollowing.maxAskedLength) characters")])
        }
        var names: [String] = []
        var seen: Set<String> = []
        for part in (text ?? "").split(separator: ",") {
            let name = part.trimmingCharacters(in: .whitespaces)
            if !name.isEmpty, seen.insert(name.lowercased()).inserted { names.append(name) }
        }
        guard !names.isEmpty, names.count <= PresenceFollowing.maxAsked else {
            throw Problem(
                .unprocessableContent, "Invalid fields",
                detail: names.isEmpty ? "people names nobody" : "people names \(names.count) people; at most \(PresenceFollowing.maxAsked) at once",
                errors: [.init(field: "people", detail: "1 to \(PresenceFollowing.maxAsked) emails or ids, separated by commas")])
        }
        return names
    }

    struct TicketAnswer: Encodable {
        let ticket: String
        let expiresAt: Date
    }

    /// The live channel's routes (docs/live-protocol.md): the WebSocket, its tickets, presence, receipts.
    func addLive(to group: RouterGroup<APIContext>) {
        group.get("live") { request, context in
            let caller = try context.requireCaller()
            let person = try caller.actor()
            let after = try request.uri.queryParameters.get("after").map { text -> Int64 in
                guard let position = LiveFrame.position(text) else {
                    throw Problem(
                        .unprocessableContent, "Invalid fields", detail: "after is not a cursor",
                        errors: [.init(field: "after", detail: "the cursor of a frame this socket's person was sent")])
                }
                return position
            }
            let device = request.uri.queryParameters.get("device")
            if let device {
                // A device that is theirs now: not logged out, not a Live Activity's token.
                guard try await store.withTenant(caller.tenant, { try await $0.liveDevice(token: String(device), of: person) }) != nil else {
                    throw Problem(
                        .unprocessableContent, "Invalid fields", detail: "device is not one of \(person.email)'s registered devices",
                        errors: [.init(field: "device", detail: "a token registered with POST /v1/devices and not removed since")])
                }
            }
            try live.checkRoom(for: person)
            guard let slot = context.liveUpgrade else {
                throw Problem(
                    .upgradeRequired, "WebSocket only",
                    detail: "GET /v1/live is a WebSocket: connect with a WebSocket client (Connection: Upgrade, Upgrade: websocket)")
            }
            let (head, horizon) = try await live.positions()
            slot.accept(
                LivePlan(
                    tenant: caller.tenant, person: person, credentialID: caller.credentialID, credentialKind: caller.kind, after: after,
                    device: device, head: head, horizon: horizon))
            return Response(status: .ok)
        }

        group.post("live/tickets") { _, context in
            let caller = try context.requireCaller()
            let person = try caller.actor()
            let (ticket, expiresAt) = try await store.withTenant(caller.tenant) {
                try await $0.createLiveTicket(credential: caller.credentialID, person: person)
            }
            return try JSONBody.response(TicketAnswer(ticket: ticket, expiresAt: expiresAt), status: .created, headers: [.cacheControl: "no-store"])
        }

        group.get("presence") { request, context in
            let (caller, viewer) = try Self.person(context)
            let named = try Self.presenceNames(request.uri.queryParameters.get("people"))
            let found = try await store.withTenant(caller.tenant) { try await $0.presence(of: named, viewer: viewer) }
            return try JSONBody.response(PresenceListAnswer(people: found.people.map(LiveFrame.PresenceEntry.init), unknown: found.unknown))
        }

        group.get("people/:email/presence") { _, context in
            let (caller, viewer) = try Self.person(context)
            let email = try context.parameters.decoded("email")
            let presence = try await store.withTenant(caller.tenant) { try await $0.presence(of: email, viewer: viewer) }
            return try JSONBody.response(presence)
        }
    }
}
