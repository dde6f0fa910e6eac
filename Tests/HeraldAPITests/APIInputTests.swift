import Foundation
import HeraldCore
import HeraldStore
import Testing

/// What the hostile audit of issue 41 sent: each is one clear 4xx naming the field (never a
/// 500) and writes nothing.
@Suite struct APIInputTests {
    private func text(_ reply: APIHarness.Reply) -> String { String(decoding: reply.body, as: UTF8.self) }

    /// The API counted grapheme clusters and the database counts code points: `a` with 250
    /// combining marks is one `Character`, and answered 500 (or a 40 KB reason was stored).
    @Test func lengthsAreCodePointsEverywhere() async throws {
        try await APIHarness.with { api in
            let alice = try await api.token("alice@acme.test")
            let chidi = try await api.token("chidi@acme.test")
            let marked = "a" + String(repeating: "\u{301}", count: 250)
            let activities = try await api.count("activities")
            let assigned = try await api.call(
                "POST", "/v1/activities", token: alice, json: ["team": "ops", "assignee": "chidi@acme.test", "name": marked, "deadline": "2026-12-01"]
            )
            #expect(assigned.status == 422 && assigned.isProblem, "\(text(assigned))")
            #expect((assigned.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "name")
            #expect(try await api.count("activities") == activities)

            let conversation = try await api.call(
                "POST", "/v1/conversations", token: chidi, json: ["with": ["dana@acme.test", "alice@acme.test"], "name": marked])
            #expect(conversation.status == 422 && conversation.isProblem, "\(text(conversation))")
            let direct = try await api.call("POST", "/v1/conversations", token: chidi, json: ["with": ["dana@acme.test"]])
            let id = try #require(direct.json["id"] as? String)
            let messages = try await api.count("messages")
            let long = try await api.call(
                "POST", "/v1/conversations/\(id)/messages", token: chidi, json: ["text": "a" + String(repeating: "\u{301}", count: 20_000)])
            #expect(long.status == 422 && long.isProblem, "\(text(long))")
            let client = try await api.call("POST", "/v1/conversations/\(id)/messages", token: chidi, json: ["text": "hi", "clientId": marked])
            #expect(client.status == 422 && client.isProblem, "\(text(client))")
            #expect(try await api.count("messages") == messages)

            let started = try await api.call(
                "POST", "/v1/activities", token: alice, json: ["team": "ops", "assignee": "chidi@acme.test", "name": "Ship", "deadline": "2026-12-01"]
            )
            let activity = try #require(started.json["id"] as? String)
            for step in ["start", "complete"] {
                #expect(try await api.call("POST", "/v1/activities/\(activity)/\(step)", token: chidi).status == 200)
            }
            let reject = try await api.call(
                "POST", "/v1/activities/\(activity)/reject", token: alice, json: ["reason": "a" + String(repeating: "\u{301}", count: 20_000)])
            #expect(reject.status == 422 && reject.isProblem, "\(text(reject))")
            #expect(try await api.call("GET", "/v1/activities/\(activity)", token: alice).json["status"] as? String == "completion_requested")
        }
    }

    /// A forged cursor at year 0 or `Int64.min` and a `sentAt` in year 1 answered 500; a
    /// `sentAt` offset of `+25:00` was stored an hour off.
    @Test func timesOutsideTheCalendarAreRefusedAndOldOnesKeptExactly() async throws {
        try await APIHarness.with { api in
            let chidi = try await api.token("chidi@acme.test")
            let id = UUID().uuidString.lowercased()
            for micros in ["-62167219200000000", "\(Int64.min)"] {
                let cursor = Data("\(micros) \(id)".utf8).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
                for path in ["/v1/activities", "/v1/history"] {
                    let reply = try await api.call("GET", "\(path)?cursor=\(cursor)", token: chidi)
                    #expect(
                        reply.status == 422 && (reply.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "cursor",
                        "\(path) \(micros): \(reply.status) \(text(reply))")
                }
            }
            let direct = try await api.call("POST", "/v1/conversations", token: chidi, json: ["with": ["dana@acme.test"]])
            let conversation = try #require(direct.json["id"] as? String)
            let ancient = try await api.call(
                "POST", "/v1/conversations/\(conversation)/messages", token: chidi, json: ["text": "old", "sentAt": "0001-01-01T00:00:00Z"])
            #expect(ancient.status == 201, "\(text(ancient))")
            #expect((ancient.json["sentAt"] as? String)?.hasPrefix("0001-01-01T00:00:00") == true, "\(text(ancient))")
            let reform = try await api.call(
                "POST", "/v1/conversations/\(conversation)/messages", token: chidi, json: ["text": "reform", "sentAt": "1582-10-10T12:00:00Z"])
            #expect((reform.json["sentAt"] as? String)?.hasPrefix("1582-10-10T12:00:00") == true, "\(text(reform))")
            for offset in ["+25:00", "+99:99", "+12:60"] {
                let reply = try await api.call(
                    "POST", "/v1/conversations/\(conversation)/messages", token: chidi, json: ["text": "x", "sentAt": "2026-11-22T09:30:00\(offset)"])
                #expect(
                    reply.status == 422 && (reply.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "sentAt",
                    "\(offset): \(text(reply))")
            }
        }
    }

    /// Foundation's parser takes trailing commas, and the media type was matched by prefix.
    @Test func onlyStrictJSONAsApplicationJSONIsRead() async throws {
        try await APIHarness.with { api in
            let chidi = try await api.token("chidi@acme.test")
            let direct = try await api.call("POST", "/v1/conversations", token: chidi, json: ["with": ["dana@acme.test"]])
            let path = "/v1/conversations/\(try #require(direct.json["id"] as? String))/messages"
            for body in [
                #"{"text":"x",}"#, #"{"text":"x" /* note */}"#, #"{text:"x"}"#, #"{"text":'x'}"#, #"{"text":"x"} {}"#,
                "[" + String(repeating: "[", count: 100)
            ] {
                let reply = try await api.call("POST", path, token: chidi, raw: Array(body.utf8))
                #expect(reply.status == 400 && reply.isProblem, "\(body): \(reply.status)")
            }
            let jsonp = try await api.call(
                "POST", path, token: chidi, raw: Array(#"{"text":"x"}"#.utf8), headers: [("Content-Type", "application/jsonp")])
            #expect(jsonp.status == 415 && jsonp.isProblem)
            let charset = try await api.call(
                "POST", path, token: chidi, raw: Array(#"{ "text" : "x\u00e9\/" , "clientId": "c-1" }"#.utf8),
                headers: [("Content-Type", "Application/JSON; charset=utf-8")])
            #expect(charset.status == 201 && charset.json["text"] as? String == "xé/", "\(text(charset))")
        }
    }

    /// RFC 6750: no error code when no credentials were presented; `/` is not escaped.
    @Test func aRequestWithoutCredentialsGetsABareChallenge() async throws {
        try await APIHarness.with { api in
            let none = try await api.call("GET", "/v1/me", token: nil)
            #expect(none.status == 401 && none.headers["www-authenticate"] == #"Bearer realm="herald""#)
            let bad = try await api.call("GET", "/v1/me", token: "hrp_nothing")
            #expect(bad.status == 401 && bad.headers["www-authenticate"]?.contains(#"error="invalid_token""#) == true)
            #expect(!text(none).contains(#"\/"#) && text(none).contains("https://herald.invalid/problems/401"))
        }
    }

    /// A tenant key acting for two people with one `Idempotency-Key` and body got the first
    /// person's answer for the second, and nothing was written for the second.
    @Test func idempotencyKeysBelongToTheActingPerson() async throws {
        try await APIHarness.with { api in
            let key = try await api.key()
            let body: [String: Any] = ["with": ["alice@acme.test"]]
            let headers = [("Idempotency-Key", "same-key")]
            let forChidi = try await api.call(
                "POST", "/v1/conversations", token: key, json: body, headers: headers + [("Herald-On-Behalf-Of", "chidi@acme.test")])
            let forDana = try await api.call(
                "POST", "/v1/conversations", token: key, json: body, headers: headers + [("Herald-On-Behalf-Of", "dana@acme.test")])
            #expect(forChidi.status == 201 && forDana.status == 201, "\(text(forChidi)) \(text(forDana))")
            #expect(forDana.headers["idempotent-replayed"] == nil)
            #expect(forChidi.json["id"] as? String != forDana.json["id"] as? String)
            let again = try await api.call(
                "POST", "/v1/conversations", token: key, json: body, headers: headers + [("Herald-On-Behalf-Of", "dana@acme.test")])
            #expect(
                again.status == 201 && again.headers["idempotent-replayed"] == "true" && again.json["id"] as? String == forDana.json["id"] as? String)
        }
    }

    /// Before the event is fanned out, "why" says it is queued and whom it will consider,
    /// as far as the caller may see them.
    @Test func whyBeforeTheFanOutSaysQueued() async throws {
        try await APIHarness.with { api in
            let alice = try await api.token("alice@acme.test")
            let dana = try await api.token("dana@acme.test")
            let assigned = try await api.call(
                "POST", "/v1/activities", token: alice, json: ["team": "ops", "assignee": "chidi@acme.test", "name": "Ship", "deadline": "2026-12-01"]
            )
            let id = try #require(assigned.json["id"] as? String)
            let why = try await api.call("GET", "/v1/activities/\(id)/notifications", token: alice)
            let queued = try #require(why.items.first?["queued"] as? [String: Any], "\(text(why))")
            #expect(queued["candidates"] as? Int == 1 && (queued["people"] as? [[String: Any]])?.first?["email"] as? String == "chidi@acme.test")
            #expect(try await api.call("GET", "/v1/activities/\(id)/notifications", token: dana).status == 404)
        }
    }
}
