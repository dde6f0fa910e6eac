import Foundation
import HeraldAPI
import HeraldBench
import HeraldTesting
import Testing

@testable import HeraldLive

/// What one socket may cost the server (docs/live-protocol.md#limits), and presence that a
/// person hides, over real WebSockets against `herald serve`'s application in this process.
@Suite struct LivePresenceLimitsTests {
    /// Frames the app sends faster than they are handled wait in a bounded inbox: past it the
    /// socket gets an `error` frame and is closed (1008), and nothing more of it is worked.
    @Test func anAppSendingFasterThanItIsAnsweredIsClosed() async throws {
        let settings = LiveSettings(floodRate: 10_000, floodBurst: 10_000, inboxLimit: 4)
        try await APIHarness.with(.live, limits: RateLimits(personRate: 10_000, personBurst: 10_000), live: settings, hub: true) { api in
            let alice = try await api.token("alice@acme.test")
            let client = try #require(LiveClient(base: api.base))
            try await client.session(token: alice) { session in
                _ = try #require(try await session.receive(type: "hello"))
                // Each asks the database; two hundred arrive before the first is answered.
                for _ in 0..<200 {
                    try await session.send(#"{"type":"presence.subscribe","people":["chidi@acme.test","dana@acme.test"]}"#)
                }
                let refused = try #require(try await session.receive(type: "error", where: { $0["code"] as? String == "flood" }))
                #expect((refused["detail"] as? String)?.contains("wait unhandled") == true, "\(refused)")
                // The close follows; whatever the socket still had waiting was dropped.
                var presenceFrames = 0
                while let text = try await session.receive() {
                    if text.contains(#""type":"presence""#) { presenceFrames += 1 }
                }
                #expect(presenceFrames < 200)
            }
        }
    }

    /// A `presence.subscribe` looks people up as `GET /v1/presence` does, and takes from the
    /// same share of the credential's requests: over it, an `error` frame (the last list
    /// stays) and REST answers 429 too.
    @Test func presenceLookupsCountAgainstTheCredentialsRate() async throws {
        try await APIHarness.with(.live, limits: RateLimits(personRate: 0.01, personBurst: 4), hub: true) { api in
            let alice = try await api.token("alice@acme.test")
            let client = try #require(LiveClient(base: api.base))
            try await client.session(token: alice) { session in
                _ = try #require(try await session.receive(type: "hello"))
                // The upgrade itself took one; three lookups are answered.
                for _ in 0..<3 {
                    try await session.send(#"{"type":"presence.subscribe","people":["chidi@acme.test"]}"#)
                    #expect(try await session.receive(type: "presence") != nil)
                }
                try await session.send(#"{"type":"presence.subscribe","people":["dana@acme.test"]}"#)
                let refused = try #require(try await session.receive(type: "error"))
                #expect(refused["code"] as? String == "rate_limited", "\(refused)")
                #expect(try await api.call("GET", "/v1/presence?people=chidi@acme.test", token: alice).status == 429)
            }
        }
    }

    /// Hiding is "offline, no last-seen time" to every follower at once, and showing again is
    /// "online" (the person's socket is open).
    @Test func hidingPresenceReachesFollowersAtOnce() async throws {
        try await APIHarness.with(.live, hub: true) { api in
            let alice = try await api.token("alice@acme.test")
            let chidi = try await api.token("chidi@acme.test")
            let client = try #require(LiveClient(base: api.base))
            try await client.session(token: alice) { session in
                _ = try #require(try await session.receive(type: "hello"))
                try await session.send(#"{"type":"presence.subscribe","people":["chidi@acme.test"]}"#)
                _ = try #require(try await session.receive(type: "presence"))
                func chidiFrame(online: Bool) async throws -> [String: Any]? {
                    try await session.receive(type: "presence") { frame in
                        (frame["people"] as? [[String: Any]] ?? []).contains {
                            $0["person"] as? String == "chidi@acme.test" && $0["online"] as? Bool == online
                        }
                    }
                }
                try await client.session(token: chidi) { chidiSession in
                    _ = try #require(try await chidiSession.receive(type: "hello"))
                    #expect(try await chidiFrame(online: true) != nil, "Chidi came online")
                    let hidden = try await api.call("PUT", "/v1/me/preferences", token: chidi, json: ["showPresence": false])
                    #expect(hidden.status == 200)
                    let offline = try #require(try await chidiFrame(online: false), "hiding is offline to a follower")
                    let entry = (offline["people"] as? [[String: Any]])?.first { $0["person"] as? String == "chidi@acme.test" }
                    #expect(entry?["lastSeen"] is NSNull, "\(String(describing: entry))")
                    #expect(try await api.call("PUT", "/v1/me/preferences", token: chidi, json: ["showPresence": true]).status == 200)
                    #expect(try await chidiFrame(online: true) != nil, "showing again is online")
                }
            }
        }
    }
}
