import Foundation
import HeraldCore
import Testing

/// What an app may send on the live channel, parsed with no server.
struct LiveClientFrameTests {
    let id = UUID()

    @Test func everyFrameTypeIsRead() {
        let text = id.uuidString.lowercased()
        #expect(LiveClientFrame.parse(#"{"type":"ping"}"#) == .success(.ping))
        #expect(LiveClientFrame.parse(#"{"type":"viewing","conversation":"\#(text)"}"#) == .success(.viewing(id)))
        #expect(LiveClientFrame.parse(#"{"type":"viewing","conversation":null}"#) == .success(.viewing(nil)))
        #expect(
            LiveClientFrame.parse(#"{"type":"received","conversation":"\#(text)","sequence":7}"#)
                == .success(.received(conversation: id, sequence: 7)))
        #expect(LiveClientFrame.parse(#"{"type":"read","conversation":"\#(text)","sequence":0}"#) == .success(.read(conversation: id, sequence: 0)))
        #expect(LiveClientFrame.parse(#"{"type":"typing","conversation":"\#(text)"}"#) == .success(.typing(conversation: id)))
        #expect(LiveClientFrame.parse(#"{"type":"foreground","value":true}"#) == .success(.foreground(true)))
    }

    @Test func badFramesAreRefusedWithACode() {
        func code(_ text: String) -> String? {
            if case .failure(let refusal) = LiveClientFrame.parse(text) { return refusal.code }
            return nil
        }
        #expect(code("not json") == "invalid_frame")
        #expect(code("[1, 2]") == "invalid_frame")
        #expect(code(#"{"type": 3}"#) == "invalid_frame")
        #expect(code(#"{"type":"dance"}"#) == "unknown_type")
        #expect(code(#"{"type":"viewing"}"#) == "invalid_frame")
        #expect(code(#"{"type":"read","conversation":"nope","sequence":1}"#) == "invalid_frame")
        #expect(code(#"{"type":"read","conversation":"\#(id.uuidString)","sequence":-1}"#) == "invalid_frame")
        #expect(code(#"{"type":"received","conversation":"\#(id.uuidString)"}"#) == "invalid_frame")
        #expect(code(#"{"type":"foreground"}"#) == "invalid_frame")
        #expect(code(#"{"type":"typing","conversation":null}"#) == "invalid_frame")
    }

    /// A field of the wrong type gets an error that names it (it used to say only that the
    /// frame was not an object with a string type).
    @Test func aFieldOfTheWrongTypeIsNamed() {
        func detail(_ text: String) -> String? {
            if case .failure(let refusal) = LiveClientFrame.parse(text) { return refusal.detail }
            return nil
        }
        let text = id.lowercasedString
        #expect(detail(#"{"type":"read","conversation":"\#(text)","sequence":1.5}"#)?.hasPrefix("sequence must be a whole number") == true)
        #expect(detail(#"{"type":"read","conversation":"\#(text)","sequence":"3"}"#)?.hasPrefix("sequence must be a whole number") == true)
        #expect(detail(#"{"type":"read","conversation":"\#(text)","sequence":true}"#)?.hasPrefix("sequence must be a whole number") == true)
        #expect(detail(#"{"type":"typing","conversation":5}"#)?.hasPrefix("conversation must be a string") == true)
        #expect(detail(#"{"type":"foreground","value":"yes"}"#)?.hasPrefix("value must be true or false") == true)
        #expect(detail(#"{"type":7}"#)?.hasPrefix("type must be a string") == true)
        // Either case of an id is read.
        #expect(LiveClientFrame.parse(#"{"type":"typing","conversation":"\#(text.uppercased())"}"#) == .success(.typing(conversation: id)))
    }

    @Test func anUnknownTypeIsQuotedOnlyInPart() {
        guard case .failure(let refusal) = LiveClientFrame.parse(#"{"type":"\#(String(repeating: "x", count: 500))"}"#) else {
            Issue.record("refused")
            return
        }
        #expect(refusal.detail.unicodeScalars.count < 200)
    }

    @Test func presenceIsForThemselvesAndThoseWhoShareATeamOrAConversation() {
        let me = Person(id: UUID(), email: "me@acme.test", name: "Me", locale: "en", timeZone: "UTC", isAdmin: false, createdAt: Date())
        let admin = Person(id: UUID(), email: "a@acme.test", name: "A", locale: "en", timeZone: "UTC", isAdmin: true, createdAt: Date())
        #expect(AccessPolicy(me).maySeePresence(of: me.id, sharesTeamOrConversation: false))
        #expect(AccessPolicy(me).maySeePresence(of: UUID(), sharesTeamOrConversation: true))
        #expect(!AccessPolicy(me).maySeePresence(of: UUID(), sharesTeamOrConversation: false))
        #expect(!AccessPolicy(admin).maySeePresence(of: UUID(), sharesTeamOrConversation: false))
    }
}
