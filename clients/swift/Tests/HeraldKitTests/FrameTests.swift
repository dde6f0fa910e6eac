import Foundation
import HeraldKit
import Testing

/// Frames as docs/live-protocol.md writes them, read; the app's frames, written.
@Suite struct FrameTests {
    @Test func everyServerFrameIsRead() throws {
        let conversation = "0193a1b2-0000-7000-8000-000000000001"
        #expect(
            ServerFrame.parse(#"{"type":"hello","person":"bob@acme.test","cursor":"1042","heartbeat":15}"#)
                == .hello(.init(person: "bob@acme.test", cursor: "1042", heartbeat: 15)))
        let receipt = ServerFrame.parse(
            #"{"type":"receipt","cursor":"1045","conversation":"\#(conversation)","person":"carol@acme.test","received":88,"read":88}"#)
        #expect(
            receipt
                == .durable(
                    cursor: "1045",
                    .receipt(Receipt(conversation: UUID(uuidString: conversation)!, person: "carol@acme.test", received: 88, read: 88))))
        let presence = ServerFrame.parse(
            #"{"type":"presence","people":[{"person":"dana@acme.test","online":false,"lastSeen":"2026-11-27T08:12:40Z"},{"person":"erin@acme.test","online":true,"lastSeen":null}]}"#
        )
        guard case .ephemeral(.presence(let people))? = presence else {
            Issue.record("presence: \(String(describing: presence))")
            return
        }
        #expect(people.map(\.online) == [false, true] && people[0].lastSeen != nil && people[1].lastSeen == nil)
        #expect(
            ServerFrame.parse(#"{"type":"typing","conversation":"\#(conversation)","person":"dana@acme.test"}"#)
                == .ephemeral(.typing(conversation: UUID(uuidString: conversation)!, person: "dana@acme.test")))
        #expect(ServerFrame.parse(#"{"type":"badge","count":3}"#) == .ephemeral(.badge(3)))
        #expect(ServerFrame.parse(#"{"type":"resync","reason":"cursor_expired"}"#) == .resync(reason: "cursor_expired"))
        #expect(
            ServerFrame.parse(#"{"type":"error","code":"not_found","detail":"no such"}"#)
                == .ephemeral(.refused(code: "not_found", detail: "no such")))
        #expect(ServerFrame.parse(#"{"type":"pong"}"#) == .ephemeral(nil))
        #expect(ServerFrame.parse(#"{"type":"something.new","x":1}"#) == .ephemeral(nil))
        let notification = ServerFrame.parse(
            #"{"type":"notification","cursor":"7","notification":{"id":"\#(conversation)","event":"activity.assigned","title":"New","body":"Ship it","priority":"p1","activityId":"\#(conversation)","badge":2}}"#
        )
        guard case .durable("7", .notification(let banner))? = notification else {
            Issue.record("notification: \(String(describing: notification))")
            return
        }
        #expect(banner.title == "New" && banner.badge == 2)
    }

    /// The inbox's frames (docs/inbox.md): an item added comes with its notification's cursor
    /// (that frame moved past it), a change with its own.
    @Test func theInboxFramesAreRead() throws {
        let id = "0193a1b2-0000-7000-8000-000000000002"
        let added = ServerFrame.parse(
            #"{"type":"inbox","cursor":"8","item":{"actions":["start"],"activity":{"id":"\#(id)","name":"Fence","priority":"p1","status":"assigned","version":1},"activityId":"\#(id)","app":"member","body":"Fence","createdAt":"2026-11-29T09:02:11.125Z","engagement":{"seen":{"at":"2026-11-29T09:05:02Z","deviceId":"\#(id)"}},"event":"activity.assigned","id":"\#(id)","priority":"p1","title":"New"}}"#
        )
        guard case .ephemeral(.inboxItem(let item))? = added else {
            Issue.record("inbox: \(String(describing: added))")
            return
        }
        #expect(item.actions == ["start"] && item.activity?.status == .assigned && item.engagement.seen?.deviceId == UUID(uuidString: id))
        #expect(item.isUnread)
        let changed = ServerFrame.parse(#"{"type":"inbox.status","cursor":"9","ids":["\#(id)"],"status":"read","at":"2026-11-29T09:06:00Z"}"#)
        guard case .durable("9", .inboxStatus(let change))? = changed else {
            Issue.record("inbox.status: \(String(describing: changed))")
            return
        }
        #expect(change.ids == [UUID(uuidString: id)!] && change.status == "read" && change.badge == nil)
    }

    @Test func whatIsNotAFrameIsNothing() {
        for text in ["", "[]", "{", #"{"type":"message","cursor":"1"}"#, #"{"type":"hello","person":"x"}"#, #"{"type":7}"#] {
            #expect(ServerFrame.parse(text) == nil, "\(text)")
        }
    }

    @Test func theAppsFramesAreJSONAsTheServerReadsThem() throws {
        let id = UUID(uuidString: "0193A1B2-0000-7000-8000-000000000001")!
        func object(_ frame: ClientFrame) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(frame.text.utf8)) as? [String: Any])
        }
        #expect(try object(.viewing(id))["conversation"] as? String == "0193a1b2-0000-7000-8000-000000000001")
        #expect(try object(.viewing(nil))["conversation"] is NSNull)
        #expect(try object(.foreground(false))["value"] as? Bool == false)
        #expect(try object(.read(conversation: id, sequence: 88))["sequence"] as? Int == 88)
        #expect(try object(.received(conversation: id, sequence: 3))["type"] as? String == "received")
        #expect(try object(.typing(conversation: id))["type"] as? String == "typing")
        #expect(try object(.ping)["type"] as? String == "ping")
        // Names with quotes and escapes stay one string each.
        let people = try object(.subscribe(["dana@acme.test", #"a"b\c@x.test"#]))["people"] as? [String]
        #expect(people == ["dana@acme.test", #"a"b\c@x.test"#])
    }
}
