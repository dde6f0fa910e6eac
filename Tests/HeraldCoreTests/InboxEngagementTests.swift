import Foundation
import HeraldCore
import Testing

/// An inbox item's engagement as a value: each change once, with its first time and device.
struct InboxEngagementTests {
    let nine = Date(timeIntervalSince1970: 1_795_338_000)
    let pixel = UUID()
    let laptop = UUID()

    @Test func readingSeesTooAndTheFirstTimeStays() {
        var item = InboxEngagement()
        #expect(item.isUnseen && item.isUnread)
        #expect(item.apply(.read, at: nine, device: pixel) == [.seen, .read])
        #expect(item.seen == .init(at: nine, device: pixel) && item.read == .init(at: nine, device: pixel))
        #expect(item.apply(.read, at: nine + 60, device: laptop).isEmpty, "read again: nothing happens")
        #expect(item.apply(.seen, at: nine + 60).isEmpty)
        #expect(item.read?.device == pixel && item.read?.at == nine)
        #expect(!item.isUnseen && !item.isUnread)
    }

    @Test func undoingClearsWhatItUndoesAndNoMore() {
        var item = InboxEngagement()
        item.apply(.read, at: nine)
        item.apply(.archive, at: nine)
        #expect(item.apply(.unread, at: nine + 1).isEmpty)
        #expect(item.read == nil && !item.isUnseen, "unread keeps it seen")
        #expect(!item.isUnread, "an archived item is not counted")
        item.apply(.read, at: nine + 2)
        item.apply(.unseen, at: nine + 3)
        #expect(item.isUnseen && item.read == nil, "unseen makes it unread too")
        #expect(item.archived != nil, "archiving is apart")
        item.apply(.unarchive, at: nine + 4)
        #expect(item.archived == nil && item.isUnread, "unarchived and unread: counted again")
        #expect(item.apply(.seen, at: nine + 5, device: laptop) == [.seen], "seen again after an unseen: a new time")
        #expect(item.seen?.at == nine + 5)
    }

    @Test func openingThePushReadsItOnceAndAnActionIsAnInteraction() {
        var item = InboxEngagement()
        #expect(item.opened(at: nine, device: pixel, action: nil) == [.opened, .seen, .read])
        #expect(item.opened(at: nine + 5, device: pixel, action: nil).isEmpty, "the app may report it twice")
        #expect(item.opened(at: nine + 9, device: pixel, action: "APPROVE") == [.interacted], "an action later still counts once")
        #expect(item.action == "APPROVE" && item.interacted?.at == nine + 9 && item.opened?.at == nine)
        #expect(item.opened(at: nine + 20, device: laptop, action: "SEND_BACK").isEmpty)

        var approved = InboxEngagement()
        approved.apply(.seen, at: nine)
        #expect(approved.opened(at: nine + 1, device: pixel, action: "APPROVE") == [.opened, .interacted, .read])
    }

    @Test func deliveryIsRecordedOnceAndChangesNothingElse() {
        var item = InboxEngagement()
        #expect(item.delivered(at: nine, device: pixel) == [.delivered])
        #expect(item.delivered(at: nine + 1, device: pixel).isEmpty)
        #expect(item.isUnseen && item.isUnread)
    }

    @Test func itIsStoredAsItIs() throws {
        var item = InboxEngagement()
        item.opened(at: nine, device: pixel, action: "START")
        item.apply(.archive, at: nine + 1, device: nil)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        #expect(try decoder.decode(InboxEngagement.self, from: encoder.encode(item)) == item)
    }

    @Test func anItemIsAnActivitysNotificationThePersonDidNotTurnOff() {
        let activity = UUID()
        for decision in NotificationDecision.allCases {
            let counted = InboxItem.includes(activity: activity, isDigest: false, isLiveActivity: false, decision: decision)
            #expect(counted == (decision != .preferenceOff), "\(decision): whatever became of its push but a preference off")
        }
        #expect(!InboxItem.includes(activity: nil, isDigest: false, isLiveActivity: false, decision: .send), "chat stays in conversations")
        #expect(!InboxItem.includes(activity: activity, isDigest: true, isLiveActivity: false, decision: .send), "a digest's own push")
        #expect(!InboxItem.includes(activity: activity, isDigest: false, isLiveActivity: true, decision: .send), "a Live Activity's push")
    }
}

extension Date {
    fileprivate static func + (date: Date, seconds: Int) -> Date {
        date.addingTimeInterval(TimeInterval(seconds))
    }

}
