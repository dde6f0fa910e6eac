import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// `GET|PUT /v1/policy`: one document, read by anyone in the tenant, replaced by admins and
/// tenant keys, every field checked before anything is written.
@Suite struct APIPolicyTests {
    static var document: [String: Any] {
        [
            "approvalReminder": ["p0": "5s", "p1": "4h", "p2": "1d", "p3": "off"],
            "escalateAfter": ["p0": "10s", "p1": "1d", "p2": "off", "p3": "off"],
            "deadlineReminderAt": "08:30", "overdue": false
        ]
    }

    @Test func anAdminReplacesThePolicyAndEveryoneReadsIt() async throws {
        try await APIHarness.with { api in
            let chidi = try await api.token("chidi@acme.test")
            let first = try await api.call("GET", "/v1/policy", token: chidi)
            #expect(first.status == 200)
            #expect(first.json["approvalReminder"] as? [String: String] == ["p0": "30m", "p1": "4h", "p2": "1d", "p3": "off"])
            #expect(first.json["deadlineReminderAt"] as? String == "09:00" && first.json["overdue"] as? Bool == true)
            #expect(first.json["unopened"] as? [String: String] == ["p0": "off", "p1": "off", "p2": "off", "p3": "off"])

            let refused = try await api.call("PUT", "/v1/policy", token: chidi, json: Self.document)
            #expect(refused.status == 403 && refused.isProblem)
            #expect(try await api.count("tenant_policies") == 0)

            let ada = try await api.token("root@acme.test")
            let set = try await api.call("PUT", "/v1/policy", token: ada, json: Self.document)
            #expect(set.status == 200, "\(String(decoding: set.body, as: UTF8.self))")
            #expect(set.json["approvalReminder"] as? [String: String] == ["p0": "5s", "p1": "4h", "p2": "1d", "p3": "off"])
            let read = try await api.call("GET", "/v1/policy", token: chidi)
            #expect(read.json["escalateAfter"] as? [String: String] == ["p0": "10s", "p1": "1d", "p2": "off", "p3": "off"])
            #expect(read.json["deadlineReminderAt"] as? String == "08:30" && read.json["overdue"] as? Bool == false)

            // A tenant key acts as the tenant's backend, which may; `unopened` may name some priorities.
            var again = Self.document
            again["overdue"] = true
            again["unopened"] = ["p0": "15m"]
            #expect(try await api.call("PUT", "/v1/policy", token: try await api.key(), json: again).status == 200)
            let unopened = try await api.call("GET", "/v1/policy", token: chidi).json["unopened"] as? [String: String]
            #expect(unopened == ["p0": "15m", "p1": "off", "p2": "off", "p3": "off"])
            // Another tenant's policy is its own.
            let globex = try await api.call("GET", "/v1/policy", token: try await api.token("chidi@acme.test", in: api.globex))
            #expect(globex.json["approvalReminder"] as? [String: String] == ["p0": "30m", "p1": "4h", "p2": "1d", "p3": "off"])
        }
    }

    @Test func aBadDocumentIsOneProblemNamingTheField() async throws {
        try await APIHarness.with { api in
            let ada = try await api.token("root@acme.test")
            func with(_ change: (inout [String: Any]) -> Void) -> [String: Any] {
                var document = Self.document
                change(&document)
                return document
            }
            let cases: [(String, [String: Any], String, String?)] = [
                (
                    "a bad duration", with { $0["approvalReminder"] = ["p0": "soon", "p1": "4h", "p2": "1d", "p3": "off"] },
                    "approvalReminder.p0", "approvalReminder.p0 \"soon\" is not a duration such as 90s, 15m, 2h or 7d"
                ),
                (
                    "zero", with { $0["escalateAfter"] = ["p0": "0s", "p1": "4h", "p2": "1d", "p3": "off"] },
                    "escalateAfter.p0", "escalateAfter.p0 \"0s\" must be whole seconds from 1s to 365d (or off)"
                ),
                ("a missing priority", with { $0["approvalReminder"] = ["p0": "1m", "p1": "4h", "p2": "1d"] }, "approvalReminder.p3", "required"),
                (
                    "an unknown priority", with { $0["approvalReminder"] = ["p0": "1m", "p1": "4h", "p2": "1d", "p3": "off", "p4": "1m"] },
                    "approvalReminder.p4", "p4 is not a priority (p0, p1, p2, p3)"
                ),
                ("a bad time", with { $0["deadlineReminderAt"] = "9am" }, "deadlineReminderAt", nil),
                (
                    "a bad wait to be opened", with { $0["unopened"] = ["p1": "later"] },
                    "unopened.p1", "unopened.p1 \"later\" is not a duration such as 90s, 15m, 2h or 7d"
                ),
                ("a missing field", with { $0["overdue"] = nil }, "overdue", "required"),
                ("an unknown field", with { $0["quietHours"] = "22:00-07:00" }, "quietHours", nil),
                ("a wrong type", with { $0["overdue"] = "yes" }, "overdue", nil)
            ]
            for (label, json, field, detail) in cases {
                let reply = try await api.call("PUT", "/v1/policy", token: ada, json: json)
                let errors = reply.json["errors"] as? [[String: Any]] ?? []
                #expect(reply.status == 422 && reply.isProblem, "\(label): \(reply.status)")
                #expect(errors.map { $0["field"] as? String } == [field], "\(label): \(errors)")
                if let detail { #expect(errors.first?["detail"] as? String == detail, "\(label): \(errors)") }
            }
            #expect(try await api.count("tenant_policies") == 0)
        }
    }
}

/// `GET|PUT /v1/me/preferences`: a person's own switches and quiet hours.
@Suite struct APIPreferencesTests {
    @Test func aPersonSwitchesEventsAndSetsQuietHours() async throws {
        try await APIHarness.with { api in
            let alice = try await api.token("alice@acme.test")
            let first = try await api.call("GET", "/v1/me/preferences", token: alice)
            #expect(first.status == 200)
            let entries = first.json["entries"] as? [[String: Any]] ?? []
            #expect(entries.count >= 10 && entries.allSatisfy { $0["enabled"] as? Bool == true && $0["origin"] as? String == "default" })

            let set = try await api.call(
                "PUT", "/v1/me/preferences", token: alice,
                json: [
                    "events": [["event": "activity.started", "enabled": false]],
                    "quietHours": ["window": "22:00-07:00", "days": ["mon", "tue"]]
                ])
            #expect(set.status == 200, "\(String(decoding: set.body, as: UTF8.self))")
            let started = (set.json["entries"] as? [[String: Any]])?.first { $0["event"] as? String == "activity.started" }
            #expect(started?["enabled"] as? Bool == false && started?["origin"] as? String == "own")
            let hours = set.json["quietHours"] as? [String: Any]
            #expect(hours?["window"] as? String == "22:00-07:00" && hours?["days"] as? [String] == ["mon", "tue"])

            // What a PUT does not name stays; null removes the quiet hours.
            let cleared = try await api.call("PUT", "/v1/me/preferences", token: alice, json: ["quietHours": NSNull()])
            #expect(cleared.status == 200 && cleared.json["quietHours"] == nil)
            let still = (cleared.json["entries"] as? [[String: Any]])?.first { $0["event"] as? String == "activity.started" }
            #expect(still?["enabled"] as? Bool == false)
            // "off" removes them too: what a generated client can send (it cannot send a null).
            _ = try await api.call("PUT", "/v1/me/preferences", token: alice, json: ["quietHours": ["window": "22:00-07:00"]])
            let off = try await api.call("PUT", "/v1/me/preferences", token: alice, json: ["quietHours": "off"])
            #expect(off.status == 200 && off.json["quietHours"] == nil)

            for (json, field) in [
                (["events": [["event": "activity.started", "app": "member", "enabled": false]]], "events[0].app"),
                (["events": [["event": "activity.nope", "enabled": false]]], "events[0].event"),
                (["quietHours": ["window": "late"]], "quietHours"), (["quietHours": "sometimes"], "quietHours")
            ] as [([String: Any], String)] {
                let reply = try await api.call("PUT", "/v1/me/preferences", token: alice, json: json)
                let fields = (reply.json["errors"] as? [[String: Any]])?.compactMap { $0["field"] as? String } ?? []
                #expect(reply.status == 422 && fields == [field], "\(field): \(reply.status) \(fields)")
            }
            // A tenant key alone is nobody: it must name a person.
            #expect(try await api.call("GET", "/v1/me/preferences", token: try await api.key()).status == 400)
        }
    }
}

/// `PUT /v1/me/preferences` for digests (docs/notifications.md): modes per event and per
/// conversation, and the window; each bad field a 422 that names it, with nothing written.
@Suite struct APIDigestPreferencesTests {
    @Test func aPersonChoosesDigestsAndTheirWindow() async throws {
        try await APIHarness.with { api in
            let alice = try await api.token("alice@acme.test")
            let conversation = try await api.call("POST", "/v1/conversations", token: alice, json: ["with": ["chidi@acme.test"]])
            let id = try #require(conversation.json["id"] as? String)
            let first = try await api.call("GET", "/v1/me/preferences", token: alice)
            #expect(first.json["digestWindow"] as? String == "1h")
            let entries = first.json["entries"] as? [[String: Any]] ?? []
            #expect(entries.allSatisfy { $0["mode"] as? String == "immediate" })
            let asks = entries.filter { $0["asksToAct"] as? Bool == true }.map { "\($0["event"] ?? "")/\($0["app"] ?? "")" }
            #expect(Set(asks) == ["activity.assigned/member", "activity.completion_requested/manager"])

            let set = try await api.call(
                "PUT", "/v1/me/preferences", token: alice,
                json: [
                    "digest": ["window": "daily 08:00"], "events": ["activity.started": "digest", "chat.message": "off"],
                    "conversations": [id: "digest"]
                ])
            #expect(set.status == 200, "\(String(decoding: set.body, as: UTF8.self))")
            #expect(set.json["digestWindow"] as? String == "daily 08:00")
            let modes = Dictionary(
                ((set.json["entries"] as? [[String: Any]]) ?? []).map { ("\($0["event"] ?? "")/\($0["app"] ?? "")", $0["mode"] as? String) }
            ) { first, _ in first }
            #expect(modes["activity.started/manager"] == "digest" && modes["chat.message/member"] == "off" && modes["chat.message/manager"] == "off")
            let conversations = set.json["conversations"] as? [[String: Any]]
            #expect(conversations?.count == 1 && conversations?.first?["conversationId"] as? String == id)
            #expect(conversations?.first?["mode"] as? String == "digest")
            // The list form takes a mode too; null for a conversation follows chat.message again.
            let again = try await api.call(
                "PUT", "/v1/me/preferences", token: alice,
                json: ["events": [["event": "activity.started", "app": "manager", "mode": "immediate"]], "conversations": [id: NSNull()]])
            #expect(again.status == 200)
            #expect((again.json["conversations"] as? [Any])?.isEmpty == true)

            for (json, field) in [
                (["digest": ["window": "2h"]], "digest.window"), (["events": ["activity.started": "later"]], "events[0].mode"),
                (["events": [["event": "activity.started"]]], "events[0].mode"), (["conversations": ["nope": "off"]], "conversations"),
                (["conversations": [id: "sometimes"]], "conversations.\(id)")
            ] as [([String: Any], String)] {
                // Each refused whole: the window set with it is not written.
                var body = json
                body["digest"] = body["digest"] ?? ["window": "5m"]
                let reply = try await api.call("PUT", "/v1/me/preferences", token: alice, json: body)
                let fields = (reply.json["errors"] as? [[String: Any]])?.compactMap { $0["field"] as? String } ?? []
                #expect(reply.status == 422 && fields == [field], "\(field): \(reply.status) \(fields)")
            }
            // A conversation one takes no part in is not found, and nothing else is written.
            let dana = try await api.token("dana@acme.test")
            let theirs = try await api.call("POST", "/v1/conversations", token: dana, json: ["with": ["chidi@acme.test"]])
            let other = try #require(theirs.json["id"] as? String)
            let refused = try await api.call(
                "PUT", "/v1/me/preferences", token: alice, json: ["digest": ["window": "5m"], "conversations": [other: "off"]])
            #expect(refused.status == 404)
            #expect(try await api.call("GET", "/v1/me/preferences", token: alice).json["digestWindow"] as? String == "daily 08:00")
        }
    }
}

/// `GET /v1/activities/{id}/notifications`: the why trace, role-aware.
@Suite struct APIWhyTests {
    @Test func theTraceListsEveryEventForThoseWhoMaySeeTheActivity() async throws {
        try await APIHarness.with { api in
            let alice = try await api.token("alice@acme.test")
            let chidi = try await api.token("chidi@acme.test")
            let created = try await api.call(
                "POST", "/v1/activities", token: alice,
                json: [
                    "team": "ops", "assignee": "chidi@acme.test", "name": "Ship", "deadline": "2026-12-01"
                ])
            let id = try #require(created.json["id"] as? String)
            #expect(try await api.call("POST", "/v1/activities/\(id)/start", token: chidi).status == 200)
            let trace = try await api.call("GET", "/v1/activities/\(id)/notifications", token: alice)
            #expect(trace.status == 200)
            let items = trace.json["items"] as? [[String: Any]] ?? []
            #expect(items.map { $0["event"] as? String } == ["activity.assigned", "activity.started"])
            #expect(items.map { ($0["actor"] as? [String: Any])?["email"] as? String } == ["alice@acme.test", "chidi@acme.test"])
            // Not fanned out yet (no worker here): nobody told so far.
            #expect(items.allSatisfy { ($0["recipients"] as? [Any])?.isEmpty == true })
            // Dana, another member, may not see Chidi's activity: as if it did not exist.
            let dana = try await api.call("GET", "/v1/activities/\(id)/notifications", token: try await api.token("dana@acme.test"))
            #expect(dana.status == 404 && dana.isProblem)
            let bad = try await api.call("GET", "/v1/activities/\(id)/notifications?user=not-an-email", token: alice)
            #expect(bad.status == 422 && bad.isProblem)
        }
    }
}
