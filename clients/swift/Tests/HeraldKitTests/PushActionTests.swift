import Foundation
import HeraldKit
import Testing

/// The buttons on a push, read from its payload.
@Suite struct PushActionTests {
    @Test func theCategoriesOfferTheirButtonsAndEachIsATransition() {
        #expect(PushAction.categories["ACTIVITY_ASSIGNED"] == [.start])
        #expect(PushAction.categories["ACTIVITY_APPROVAL"] == [.approve, .sendBack])
        #expect(PushAction.allCases.map(\.transition) == [.start, .approve, .reject])
        #expect(PushAction(rawValue: "SEND_BACK") == .sendBack)
    }

    @Test func anActivityPushIsReadFromItsDataAndOthersAreNot() {
        let id = UUID()
        let push = ActivityPush(payload: ["activityId": id.uuidString.lowercased(), "version": "3", "category": "ACTIVITY_APPROVAL", "aps": [:]])
        #expect(push == ActivityPush(payload: ["activityId": id.uuidString, "version": 3, "category": "ACTIVITY_APPROVAL"]))
        #expect(push?.activity == id && push?.version == 3)
        #expect(ActivityPush(payload: ["conversationID": id.uuidString, "type": "new_message"]) == nil)
        #expect(ActivityPush(payload: ["activityId": "not an id", "version": "3"]) == nil)
        #expect(ActivityPush(payload: ["activityId": id.uuidString, "version": "three"]) == nil)
    }

    @Test func anAPNsTokenIsWrittenInLowerCaseHexadecimal() {
        #expect(Data([0x00, 0x0f, 0xab, 0xff]).hexadecimal == "000fabff")
        #expect(Backoff().ceiling(attempt: 100) == .seconds(30))
    }
}
