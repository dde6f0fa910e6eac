import Foundation
import HeraldBench
import HeraldCore
import Testing

@testable import HeraldStore

/// The inbox over HTTP (docs/inbox.md): a person's own list, paged; counts and the badge;
/// marks that name each bad field and write nothing partial; a push's opening reported by
/// its recipient alone; every socket of the person told.
@Suite struct APIInboxTests {
    /// Alice assigns Chidi `names`, and the dispatcher tells him.
    static func assign(_ api: APIHarness, _ names: [String], to assignee: String = "chidi@acme.test") async throws {
        let alice = try await api.token("alice@acme.test")
        for name in names {
            let created = try await api.call(
                "POST", "/v1/activities", token: alice, json: ["team": "ops", "assignee": assignee, "name": name, "deadline": "2030-01-01"])
            #expect(created.status == 201, "\(created.json)")
        }
        try await api.dispatch()
    }

    @Test func theInboxIsThePersonsOwnAndPaged() async throws {
        try await APIHarness.with { api in
            try await Self.assign(api, ["Fence repair", "Pump seal", "Roof"])
            try await Self.assign(api, ["Dana's own"], to: "dana@acme.test")
            let (chidi, dana, key) = (try await api.token("chidi@acme.test"), try await api.token("dana@acme.test"), try await api.key())

            let first = try await api.call("GET", "/v1/me/inbox?limit=2", token: chidi)
            #expect(first.status == 200 && first.items.count == 2)
            let item = try #require(first.items.first)
            #expect(item["event"] as? String == "activity.assigned" && item["actions"] as? [String] == ["start"], "\(item)")
            #expect((item["activity"] as? [String: Any])?["status"] as? String == "assigned")
            #expect((item["title"] as? String ?? "").contains("Roof") || (item["body"] as? String ?? "").contains("Roof"), "newest first")
            let next = try #require(first.json["next"] as? String)
            #expect(first.headers["link"]?.contains("/v1/me/inbox?limit=2&cursor=") == true)
            let second = try await api.call("GET", "/v1/me/inbox?limit=2&cursor=\(next)", token: chidi)
            #expect(second.items.count == 1 && second.json["next"] == nil, "the last page has no next")

            let counts = try await api.call("GET", "/v1/me/inbox/counts", token: chidi).json
            #expect(counts["unread"] as? Int == 3 && counts["unseen"] as? Int == 3 && counts["chat"] as? Int == 0 && counts["badge"] as? Int == 3)

            // Another person's item is not found; a tenant key must say whose inbox.
            let id = try #require(item["id"] as? String)
            #expect(try await api.call("GET", "/v1/me/inbox/\(id)", token: chidi).json["id"] as? String == id)
            let foreign = try await api.call("GET", "/v1/me/inbox/\(id)", token: dana)
            #expect(foreign.status == 404 && foreign.isProblem)
            #expect(try await api.call("GET", "/v1/me/inbox", token: key).status == 400)
            #expect(try await api.call("GET", "/v1/me/inbox", token: nil).status == 401)
            let bad = try await api.call("GET", "/v1/me/inbox?status=new", token: chidi)
            #expect(bad.status == 422 && (bad.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "status")
            #expect(try await api.call("GET", "/v1/me/inbox?archived=maybe", token: chidi).status == 422)
        }
    }

    @Test func aMarkNamesEachBadFieldAndWritesNothingPartial() async throws {
        try await APIHarness.with { api in
            try await Self.assign(api, ["One", "Two"])
            try await Self.assign(api, ["Dana's"], to: "dana@acme.test")
            let (chidi, dana) = (try await api.token("chidi@acme.test"), try await api.token("dana@acme.test"))
            let mine = try await api.call("GET", "/v1/me/inbox", token: chidi).items.compactMap { $0["id"] as? String }
            let hers = try #require(try await api.call("GET", "/v1/me/inbox", token: dana).items.first?["id"] as? String)

            func fields(_ reply: APIHarness.Reply) -> [String] {
                (reply.json["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
            }
            let foreign = try await api.call("POST", "/v1/me/inbox/read", token: chidi, json: ["ids": [mine[0], hers]])
            #expect(foreign.status == 422 && fields(foreign) == ["ids[1]"], "\(foreign.json)")
            #expect(try await api.call("GET", "/v1/me/inbox/counts", token: chidi).json["unread"] as? Int == 2, "nothing was written")
            #expect(fields(try await api.call("POST", "/v1/me/inbox/read", token: chidi, json: ["ids": [mine[0], "nope"]])) == ["ids[1]"])
            #expect(fields(try await api.call("POST", "/v1/me/inbox/read", token: chidi, json: [:])) == ["ids", "before"])
            #expect(
                fields(try await api.call("POST", "/v1/me/inbox/read", token: chidi, json: ["ids": mine, "before": "2030-01-01T00:00:00Z"])).count
                    == 2)
            let tooMany = (0...InboxTarget.maxIDs).map { _ in UUID().uuidString }
            #expect(fields(try await api.call("POST", "/v1/me/inbox/read", token: chidi, json: ["ids": tooMany])) == ["ids"])
            #expect(fields(try await api.call("POST", "/v1/me/inbox/read", token: chidi, json: ["before": "yesterday"])) == ["before"])
            #expect(
                fields(try await api.call("POST", "/v1/me/inbox/seen", token: chidi, json: ["ids": [mine[0]], "device": UUID().uuidString])) == [
                    "device"
                ])
            #expect(try await api.call("POST", "/v1/me/inbox/read", token: chidi, json: ["ids": [mine[0]], "colour": "red"]).status == 422)

            let read = try await api.call("POST", "/v1/me/inbox/read", token: chidi, json: ["ids": [mine[0]]])
            #expect(read.status == 200 && read.json["ids"] as? [String] == [mine[0]] && read.json["status"] as? String == "read")
            #expect(read.json["badge"] as? Int == 1)
            let all = try await api.call("POST", "/v1/me/inbox/read", token: chidi, json: ["before": "2100-01-01T00:00:00Z"])
            #expect(all.json["ids"] as? [String] == [mine[1]] && all.json["badge"] as? Int == 0)
            let unread = try await api.call("POST", "/v1/me/inbox/unread", token: chidi, json: ["ids": mine])
            #expect(Set(unread.json["ids"] as? [String] ?? []) == Set(mine) && unread.json["badge"] as? Int == 2)
            #expect(try await api.call("GET", "/v1/me/inbox?status=unread", token: chidi).items.count == 2)
            let archived = try await api.call("POST", "/v1/me/inbox/archive", token: chidi, json: ["ids": [mine[1]]])
            #expect(archived.json["status"] as? String == "archived" && archived.json["badge"] as? Int == 1)
            #expect(try await api.call("GET", "/v1/me/inbox?archived=true", token: chidi).items.compactMap { $0["id"] as? String } == [mine[1]])
        }
    }

    @Test func theRecipientReportsTheOpeningOnceAndHistoryShowsIt() async throws {
        try await APIHarness.with { api in
            let chidi = try await api.token("chidi@acme.test")
            let phone = try await api.call(
                "POST", "/v1/devices", token: chidi, json: ["token": "chidi-phone-token", "app": "member", "platform": "android", "provider": "fcm"])
            let device = try #require(phone.json["id"] as? String)
            try await Self.assign(api, ["Pump seal"])
            let (dana, alice) = (try await api.token("dana@acme.test"), try await api.token("alice@acme.test"))
            let id = try #require(try await api.call("GET", "/v1/me/inbox", token: chidi).items.first?["id"] as? String)

            #expect(try await api.call("POST", "/v1/notifications/\(id)/opened", token: dana, json: [:]).status == 404)
            let action = try await api.call("POST", "/v1/notifications/\(id)/opened", token: chidi, json: ["action": "dance"])
            #expect(action.status == 422 && (action.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "action")
            let delivered = try await api.call("POST", "/v1/notifications/\(id)/delivered", token: chidi, json: ["device": device])
            #expect(delivered.json["events"] as? [String] == ["delivered"])
            let opened = try await api.call("POST", "/v1/notifications/\(id)/opened", token: chidi, json: ["device": device, "action": "start"])
            #expect(opened.status == 200 && opened.json["events"] as? [String] == ["opened", "interacted", "seen", "read"], "\(opened.json)")
            #expect(opened.json["badge"] as? Int == 0)
            let again = try await api.call("POST", "/v1/notifications/\(id)/opened", token: chidi, json: ["device": device, "action": "start"])
            #expect(again.status == 200 && again.json["events"] as? [String] == [], "idempotent")

            // His manager sees it in history, with the device it happened on.
            let detail = try await api.call("GET", "/v1/history/\(id)", token: alice)
            let engagement = try #require((detail.json["notification"] as? [String: Any])?["engagement"] as? [String: Any])
            #expect((engagement["opened"] as? [String: Any])?["deviceId"] as? String == device.lowercased())
            #expect(engagement["action"] as? String == "start" && engagement["delivered"] != nil)
        }
    }

    @Test func everySocketOfThePersonIsToldOfItemsAndChanges() async throws {
        try await APIHarness.with(.live, hub: true) { api in
            let chidi = try await api.token("chidi@acme.test")
            let client = try #require(LiveClient(base: api.base))
            try await client.session(token: chidi) { phone in
                try await client.session(token: chidi) { laptop in
                    _ = try #require(try await phone.receive(type: "hello"))
                    _ = try #require(try await laptop.receive(type: "hello"))
                    try await Self.assign(api, ["Replace the pump seal"])
                    let added = try #require(try await phone.receive(type: "inbox"))
                    let item = try #require(added["item"] as? [String: Any])
                    let id = try #require(item["id"] as? String)
                    #expect(item["actions"] as? [String] == ["start"])
                    _ = try #require(try await laptop.receive(type: "inbox"))
                    let badge = try #require(try await laptop.receive(type: "badge"))
                    #expect(badge["count"] as? Int == 1)

                    #expect(try await api.call("POST", "/v1/me/inbox/read", token: chidi, json: ["ids": [id]]).status == 200)
                    try await Self.expectRead(id, on: &phone)
                    try await Self.expectRead(id, on: &laptop)
                }
            }
        }
    }

    /// The socket is told the item was read, and the badge after it.
    static func expectRead(_ id: String, on socket: inout LiveClient.Session) async throws {
        let status = try #require(try await socket.receive(type: "inbox.status"))
        #expect(status["ids"] as? [String] == [id] && status["status"] as? String == "read" && status["cursor"] is String)
        #expect(try await socket.receive(type: "badge")?["count"] as? Int == 0)
    }
}
