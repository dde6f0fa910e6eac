import Foundation
import HeraldCore
import HeraldStore
import Testing

/// The apps' path over real HTTP: devices, activities and their transitions, paging, and
/// every refusal as a problem document that wrote nothing.
@Suite struct APIWorkflowTests {
    @Test func aMemberAndAManagerTakeAnActivityToApproval() async throws {
        try await APIHarness.with { api in
            let alice = try await api.token("alice@acme.test")
            let chidi = try await api.token("chidi@acme.test")
            // Chidi's phone registers its token.
            let device = try await api.call(
                "POST", "/v1/devices", token: chidi, json: ["token": "chidi-pixel-token-0001", "app": "member", "platform": "android"])
            #expect(
                device.status == 201 && device.headers["location"] == "/v1/devices/chidi-pixel-token-0001",
                "\(String(decoding: device.body, as: UTF8.self))")
            #expect(device.json["tokenPreview"] as? String != "chidi-pixel-token-0001")
            let again = try await api.call(
                "POST", "/v1/devices", token: chidi, json: ["token": "chidi-pixel-token-0001", "app": "member", "platform": "android"])
            #expect(again.status == 200)
            #expect(try await api.call("GET", "/v1/devices", token: chidi).items.count == 1)

            let created = try await api.call(
                "POST", "/v1/activities", token: alice,
                json: ["team": "ops", "assignee": "chidi@acme.test", "name": "Ship v2", "deadline": "2026-12-01", "priority": "p0"])
            #expect(created.status == 201 && created.headers["etag"] == "\"1\"")
            let id = try #require(created.json["id"] as? String).lowercased()
            #expect(created.headers["location"] == "/v1/activities/\(id)")
            let mine = try await api.call("GET", "/v1/activities", token: chidi)
            #expect(mine.items.count == 1 && (mine.items.first?["id"] as? String)?.lowercased() == id)

            let started = try await api.call("POST", "/v1/activities/\(id)/start", token: chidi, headers: [("If-Match", "\"1\"")])
            #expect(
                started.status == 200 && started.json["status"] as? String == "running" && started.headers["etag"] == "\"2\"",
                "\(String(decoding: started.body, as: UTF8.self))")
            // A stale If-Match changes nothing.
            let stale = try await api.call("POST", "/v1/activities/\(id)/complete", token: chidi, headers: [("If-Match", "\"1\"")])
            #expect(stale.status == 412 && stale.isProblem)
            // Starting again: 409, naming the status and what it allows.
            let twice = try await api.call("POST", "/v1/activities/\(id)/start", token: chidi)
            #expect(twice.status == 409 && twice.isProblem && twice.json["currentStatus"] as? String == "running")
            #expect((twice.json["allowedActions"] as? [String])?.contains("complete") == true)
            let completed = try await api.call("POST", "/v1/activities/\(id)/complete", token: chidi, headers: [("If-Match", "\"2\"")])
            #expect(completed.status == 200 && completed.json["status"] as? String == "completion_requested")
            // The member may not approve; the manager may.
            let selfApproval = try await api.call("POST", "/v1/activities/\(id)/approve", token: chidi)
            #expect(selfApproval.status == 403 && selfApproval.isProblem)
            let approved = try await api.call("POST", "/v1/activities/\(id)/approve", token: alice)
            #expect(approved.status == 200 && approved.json["status"] as? String == "approved")
            #expect(try await api.call("GET", "/v1/activities/\(id)", token: chidi).headers["etag"] == "\"4\"")
            #expect(try await api.count("activity_transitions") == 4)

            // Logging out the phone; someone else's token is not found.
            let dana = try await api.token("dana@acme.test")
            #expect(try await api.call("DELETE", "/v1/devices/chidi-pixel-token-0001", token: dana).status == 404)
            #expect(try await api.call("DELETE", "/v1/devices/chidi-pixel-token-0001", token: chidi).status == 204)
        }
    }

    /// An app on the newest Firebase SDKs registers its installation id instead of a token.
    @Test func aDeviceRegistersByInstallationIDOrTokenExactlyOne() async throws {
        try await APIHarness.with { api in
            let chidi = try await api.token("chidi@acme.test")
            let fid = "cX3vT9qLRk2bYw8mN4pZa_"
            let device = try await api.call("POST", "/v1/devices", token: chidi, json: ["fid": fid, "app": "member", "platform": "android"])
            #expect(device.status == 201 && device.headers["location"] == "/v1/devices/\(fid)", "\(String(decoding: device.body, as: UTF8.self))")
            #expect(device.json["address"] as? String == "fid" && device.json["state"] as? String == "active")
            #expect(device.json["tokenPreview"] == nil && device.json["fidPreview"] as? String != fid)
            let refusals: [[String: Any]] = [
                ["fid": fid, "token": "chidi-pixel-token-0001", "app": "member", "platform": "android"],
                ["app": "member", "platform": "android"],
                ["fid": fid, "app": "member", "platform": "ios", "provider": "apns"],
                ["fid": "not an installation id", "app": "member", "platform": "android"]
            ]
            for body in refusals {
                let refused = try await api.call("POST", "/v1/devices", token: chidi, json: body)
                #expect(refused.status == 422 && refused.isProblem, "\(body): \(String(decoding: refused.body, as: UTF8.self))")
            }
            #expect(try await api.countRegisteredDevices() == 1)
            #expect(try await api.call("DELETE", "/v1/devices/\(fid)", token: chidi).status == 204)
        }
    }

    /// A P0's Live Activity (docs/apps.md): the push-to-start token registered with the device
    /// call, the update token kept per activity by its assignee and its manager only.
    @Test func liveActivityTokensAreTheAssigneesAndTheManagersOwn() async throws {
        try await APIHarness.with { api in
            let (alice, chidi, dana) = (
                try await api.token("alice@acme.test"), try await api.token("chidi@acme.test"), try await api.token("dana@acme.test")
            )
            let start = "5ca1ab1e000000000000000000000000000000000000000000000000000000c1"
            let device = try await api.call(
                "POST", "/v1/devices", token: chidi,
                json: ["token": start, "app": "member", "platform": "ios", "provider": "apns", "kind": "liveactivity"])
            #expect(device.status == 201 && device.json["kind"] as? String == "liveactivity", "\(String(decoding: device.body, as: UTF8.self))")
            for body: [String: Any] in [
                ["token": "chidi-pixel", "app": "member", "platform": "android", "kind": "liveactivity"],
                ["token": start, "app": "member", "platform": "ios", "provider": "apns", "kind": "liveactivity_update"],
                ["token": start, "app": "member", "platform": "ios", "provider": "apns", "kind": "banner"]
            ] {
                let refused = try await api.call("POST", "/v1/devices", token: chidi, json: body)
                #expect(refused.status == 422 && refused.isProblem, "\(body): \(String(decoding: refused.body, as: UTF8.self))")
            }

            let assigned = try await api.call(
                "POST", "/v1/activities", token: alice,
                json: ["team": "ops", "assignee": "chidi@acme.test", "name": "Fix the pump", "deadline": "2026-12-01", "priority": "p0"])
            let id = try #require(assigned.json["id"] as? String)
            let update = "0bda7e00000000000000000000000000000000000000000000000000000000c1"
            let path = "/v1/activities/\(id)/live-activity"
            let kept = try await api.call("PUT", path, token: chidi, json: ["token": update])
            #expect(
                kept.status == 201 && kept.json["kind"] as? String == "liveactivity_update"
                    && (kept.json["activityId"] as? String)?.lowercased() == id.lowercased())
            #expect(kept.json["app"] as? String == "member" && kept.json["tokenPreview"] as? String != update)
            #expect(try await api.call("PUT", path, token: chidi, json: ["token": update]).status == 200)
            let managers = try await api.call(
                "PUT", path, token: alice, json: ["token": "0bda7e00000000000000000000000000000000000000000000000000000000a1"])
            #expect(managers.status == 201 && managers.json["app"] as? String == "manager")
            // Dana may not see it; a token of something else conflicts; bad tokens and apps are 422.
            #expect(try await api.call("PUT", path, token: dana, json: ["token": update]).status == 404)
            #expect(try await api.call("PUT", path, token: chidi, json: ["token": start]).status == 409)
            for body: [String: Any] in [["token": "not-hex"], ["token": update, "app": "manager"], ["token": update, "extra": 1], [:]] {
                let refused = try await api.call("PUT", path, token: chidi, json: body)
                #expect([403, 422].contains(refused.status) && refused.isProblem, "\(body): \(refused.status)")
            }
            // A P1 has none.
            let routine = try await api.call(
                "POST", "/v1/activities", token: alice,
                json: ["team": "ops", "assignee": "chidi@acme.test", "name": "Sweep", "deadline": "2026-12-01", "priority": "p1"])
            let p1 = try #require(routine.json["id"] as? String)
            let none = try await api.call("PUT", "/v1/activities/\(p1)/live-activity", token: chidi, json: ["token": update])
            #expect(none.status == 422 && none.isProblem)
            let listed = try await api.call("GET", "/v1/devices", token: chidi)
            let kinds = (listed.json["items"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
            #expect(kinds.sorted() == ["liveactivity", "liveactivity_update"])
        }
    }

    @Test func badBodiesAreRefusedInWordsAndWriteNothing() async throws {
        try await APIHarness.with { api in
            let alice = try await api.token("alice@acme.test")
            let good: [String: Any] = ["team": "ops", "assignee": "chidi@acme.test", "name": "Ship", "deadline": "2026-12-01"]
            var unknown = good
            unknown["colour"] = "red"
            var wrongType = good
            wrongType["name"] = 42
            var badDate = good
            badDate["deadline"] = "2026-02-30"
            var missing = good
            missing["assignee"] = nil
            let cases: [(String, [UInt8]?, [String: Any]?, [(name: String, value: String)], Int, String?)] = [
                ("malformed", Array("{\"team\": ".utf8), nil, [], 400, nil),
                ("invalid UTF-8", [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D], nil, [], 400, nil),
                ("an array", Array("[1, 2]".utf8), nil, [], 400, nil),
                ("unknown field", nil, unknown, [], 422, "colour"),
                ("wrong type", nil, wrongType, [], 422, "name"),
                ("impossible date", nil, badDate, [], 422, "deadline"),
                ("missing field", nil, missing, [], 422, "assignee"),
                ("a megabyte", Array(repeating: UInt8(ascii: " "), count: 1 << 20), nil, [], 413, nil),
                ("not JSON", Array("team=ops".utf8), nil, [("Content-Type", "application/x-www-form-urlencoded")], 415, nil)
            ]
            for (label, raw, json, headers, status, field) in cases {
                let reply = try await api.call("POST", "/v1/activities", token: alice, json: json, raw: raw, headers: headers)
                #expect(reply.status == status && reply.isProblem, "\(label): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
                if let field {
                    let fields = (reply.json["errors"] as? [[String: Any]])?.compactMap { $0["field"] as? String } ?? []
                    #expect(fields.contains(field), "\(label): \(fields)")
                }
                #expect(!String(decoding: reply.body, as: UTF8.self).contains("SELECT"), "\(label)")
            }
            let activities = try await api.count("activities")
            let events = try await api.count("outbox")
            #expect(activities == 0 && events == 0)

            // SQL-looking text is only text.
            var sneaky = good
            sneaky["name"] = "x'); DROP TABLE activities; --"
            let stored = try await api.call("POST", "/v1/activities", token: alice, json: sneaky)
            #expect(stored.status == 201 && stored.json["name"] as? String == "x'); DROP TABLE activities; --")
            #expect(try await api.count("activities") == 1)
        }
    }

    @Test func listsPageWithACursorInTheLinkHeader() async throws {
        try await APIHarness.with { api in
            let alice = try await api.token("alice@acme.test")
            for index in 1...5 {
                let reply = try await api.call(
                    "POST", "/v1/activities", token: alice,
                    json: ["team": "ops", "assignee": "chidi@acme.test", "name": "Task \(index)", "deadline": "2026-12-01"])
                #expect(reply.status == 201)
            }
            var seen: [String] = []
            var path: String? = "/v1/activities?limit=2"
            while let next = path {
                let page = try await api.call("GET", next, token: alice)
                #expect(page.status == 200 && page.items.count <= 2)
                seen += page.items.compactMap { $0["name"] as? String }
                path = page.headers["link"].flatMap { link in
                    link.split(separator: ">").first.map { String($0.dropFirst()) }
                }
                #expect((path == nil) == (page.json["next"] == nil))
            }
            #expect(seen == ["Task 5", "Task 4", "Task 3", "Task 2", "Task 1"])
            let filtered = try await api.call("GET", "/v1/activities?status=approved", token: alice)
            #expect(filtered.status == 200 && filtered.items.isEmpty)
            for bad in ["/v1/activities?limit=0", "/v1/activities?limit=201", "/v1/activities?cursor=nonsense", "/v1/activities?status=done"] {
                let reply = try await api.call("GET", bad, token: alice)
                #expect(reply.status == 422 && reply.isProblem, "\(bad)")
            }
        }
    }
}

/// `Idempotency-Key` on creating requests.
@Suite struct APIIdempotencyTests {
    @Test func aRetriedCreationIsAnsweredAgainAndWritesNothing() async throws {
        try await APIHarness.with { api in
            let alice = try await api.token("alice@acme.test")
            let body: [String: Any] = ["team": "ops", "assignee": "chidi@acme.test", "name": "Ship v2", "deadline": "2026-12-01"]
            let key = [(name: "Idempotency-Key", value: "assign-ship-v2-0001")]
            let first = try await api.call("POST", "/v1/activities", token: alice, json: body, headers: key)
            let retry = try await api.call("POST", "/v1/activities", token: alice, json: body, headers: key)
            #expect(
                first.status == 201 && retry.status == 201 && retry.headers["idempotent-replayed"] == "true",
                "first \(first.status) \(String(decoding: first.body, as: UTF8.self)); retry \(retry.status) \(String(decoding: retry.body, as: UTF8.self))"
            )
            #expect(retry.json["id"] as? String == first.json["id"] as? String && retry.headers["location"] == first.headers["location"])
            let activities = try await api.count("activities")
            let events = try await api.count("outbox")
            #expect(activities == 1 && events == 1)
            // The same request written another way (keys in another order, other spacing) is the same request.
            let reordered = Array(#"{ "deadline": "2026-12-01", "name": "Ship v3", "assignee": "chidi@acme.test", "team": "ops" }"#.utf8)
            let compact = Array(#"{"team":"ops","assignee":"chidi@acme.test","name":"Ship v3","deadline":"2026-12-01"}"#.utf8)
            let spelled = [(name: "Idempotency-Key", value: "assign-ship-v3")]
            let written = try await api.call("POST", "/v1/activities", token: alice, raw: reordered, headers: spelled)
            let rewritten = try await api.call("POST", "/v1/activities", token: alice, raw: compact, headers: spelled)
            #expect(
                written.status == 201 && rewritten.headers["idempotent-replayed"] == "true"
                    && rewritten.json["id"] as? String == written.json["id"] as? String)
            // The same key for another request.
            var other = body
            other["name"] = "Something else"
            let reused = try await api.call("POST", "/v1/activities", token: alice, json: other, headers: key)
            #expect(reused.status == 422 && reused.isProblem)
            // A request that failed lets its key go: the corrected one goes through.
            let failedKey = [(name: "Idempotency-Key", value: "assign-typo-0002")]
            var typo = body
            typo["deadline"] = "2026-13-01"
            #expect(try await api.call("POST", "/v1/activities", token: alice, json: typo, headers: failedKey).status == 422)
            #expect(try await api.call("POST", "/v1/activities", token: alice, json: body, headers: failedKey).status == 201)
            // Keys are per credential: another token's identical key is its own.
            let other2 = try await api.token("alice@acme.test")
            #expect(try await api.call("POST", "/v1/activities", token: other2, json: body, headers: key).headers["idempotent-replayed"] == nil)
            #expect(
                try await api.call(
                    "POST", "/v1/activities", token: alice, json: body, headers: [("Idempotency-Key", String(repeating: "k", count: 256))]
                ).status == 400)
        }
    }
}
