import Foundation
import HeraldKit
import Testing

/// Receipts folded into sent → delivered → read.
@Suite struct StatusBookTests {
    let conversation = UUID()

    @Test func inAGroupEveryOtherParticipantCounts() {
        var book = StatusBook(me: "Alice@acme.test")
        let message = Message.sample(sequence: 10, from: "alice@acme.test")
        #expect(book.record(message).isEmpty)  // nobody known yet
        let loaded = book.apply(.sample(id: conversation, people: [("alice@acme.test", 0, 0), ("bob@acme.test", 9, 9), ("carol@acme.test", 0, 0)]))
        #expect(loaded.map(\.status) == [.sent])
        #expect(book.apply(Receipt(conversation: conversation, person: "bob@acme.test", received: 10, read: nil)).isEmpty)
        #expect(book.apply(Receipt(conversation: conversation, person: "carol@acme.test", received: 12, read: nil)).map(\.status) == [.delivered])
        #expect(book.apply(Receipt(conversation: conversation, person: "bob@acme.test", received: nil, read: 10)).isEmpty)
        #expect(book.apply(Receipt(conversation: conversation, person: "CAROL@acme.test", received: nil, read: 11)).map(\.status) == [.read])
        // Lower receipts (an older frame) never take a status back.
        #expect(book.apply(Receipt(conversation: conversation, person: "carol@acme.test", received: 1, read: 1)).isEmpty)
        #expect(book.status(of: 10) == .read && book.status(of: 12) == .sent)
    }

    @Test func aReadReceiptAloneMakesEveryStepAndOthersMessagesHaveNone() {
        var book = StatusBook(me: "alice@acme.test")
        _ = book.apply(.sample(id: conversation, people: [("alice@acme.test", 0, 0), ("bob@acme.test", 0, 0)]))
        #expect(book.record(Message.sample(sequence: 3, from: "bob@acme.test")).isEmpty)
        #expect(book.record(Message.sample(sequence: 4, from: "alice@acme.test")).map(\.status) == [.sent])
        #expect(book.apply(Receipt(conversation: conversation, person: "bob@acme.test", received: nil, read: 4)).map(\.status) == [.delivered, .read])
    }

    /// After a restart: the page's statuses are where each message starts, and later
    /// receipts move them on (no step told twice).
    @Test func messagesLoadedOverRESTStartFromTheirStatusAndMoveOn() {
        var book = StatusBook(me: "alice@acme.test")
        _ = book.apply(.sample(id: conversation, people: [("alice@acme.test", 0, 0), ("bob@acme.test", 7, 6)]))
        var delivered = Message.sample(sequence: 7, from: "alice@acme.test")
        delivered.status = .delivered
        var read = Message.sample(sequence: 6, from: "alice@acme.test")
        read.status = .read
        let theirs = Message.sample(sequence: 5, from: "bob@acme.test")
        #expect(book.record(loaded: [theirs, read, delivered]).isEmpty, "the page already told them")
        #expect(book.apply(Receipt(conversation: conversation, person: "bob@acme.test", received: nil, read: 7)).map(\.status) == [.read])
        // A page without receipts starts from nothing, and the receipts known give it every step.
        let bare = Message.sample(sequence: 8, from: "alice@acme.test")
        #expect(book.record(loaded: [bare]).map(\.status) == [.sent])
    }

    @Test func alone() {
        var book = StatusBook(me: "alice@acme.test")
        _ = book.apply(.sample(id: conversation, people: [("alice@acme.test", 0, 0)]))
        #expect(book.record(Message.sample(sequence: 1, from: "alice@acme.test")).map(\.status) == [.sent])
        #expect(book.status(of: 1) == .sent)
    }
}
