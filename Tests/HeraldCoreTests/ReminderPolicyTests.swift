import Foundation
import HeraldCore
import Testing

struct ReminderPolicyTests {
    @Test func theDefaultsAreDesignSection14s() throws {
        let policy = ReminderPolicy.defaults
        #expect(Priority.allCases.map { policy.approvalReminder[$0]?.description ?? "off" } == ["30m", "4h", "1d", "off"])
        #expect(Priority.allCases.map { policy.escalateAfter[$0]?.description ?? "off" } == ["2h", "1d", "off", "off"])
        #expect(policy.deadlineReminderAt?.description == "09:00")
        #expect(policy.overdue)
    }

    @Test func settingChangesOnlyWhatIsNamed() throws {
        let policy = try ReminderPolicy.defaults.applying(approvalReminder: "p0=5s, P3=2d", deadlineReminderAt: "off")
        #expect(policy.approvalReminder.p0?.seconds == 5)
        #expect(policy.approvalReminder.p1?.seconds == 4 * 3600)
        #expect(policy.approvalReminder.p3?.seconds == 2 * 86_400)
        #expect(policy.escalateAfter == ReminderPolicy.defaults.escalateAfter)
        #expect(policy.deadlineReminderAt == nil)
        #expect(try policy.applying(overdue: "OFF").overdue == false)
        #expect(try policy.applying(approvalReminder: "p1=off").approvalReminder.p1 == nil)
    }

    @Test(arguments: [
        ("p0", "approval reminder \"p0\" is not PRIORITY=DURATION (such as p0=30m,p1=4h,p3=off)"),
        ("p9=1h", "approval reminder \"p9=1h\" is not PRIORITY=DURATION (such as p0=30m,p1=4h,p3=off)"),
        ("p0=1h,p0=2h", "approval reminder names p0 twice"),
        ("p0=0s", "approval reminder for p0 \"0s\" must be whole seconds from 1s to 365d (or off)"),
        ("p0=500ms", "approval reminder for p0 \"500ms\" must be whole seconds from 1s to 365d (or off)"),
        ("p0=366d", "approval reminder for p0 \"366d\" must be whole seconds from 1s to 365d (or off)"),
        ("p0=soon", "approval reminder for p0 \"soon\" is not a duration such as 90s, 15m, 2h or 7d"),
        ("", "approval reminder \"\" is not PRIORITY=DURATION (such as p0=30m,p1=4h,p3=off)")
    ])
    func badDurationsAreOneClearLine(input: String, message: String) {
        #expect(throws: InputError(message)) { try ReminderPolicy.defaults.applying(approvalReminder: input) }
    }

    @Test func badTimesAndSwitchesAreRefused() {
        #expect(throws: InputError("deadline reminder at \"9:00\" is not a time such as 09:00 (or off)")) {
            try ReminderPolicy.defaults.applying(deadlineReminderAt: "9:00")
        }
        #expect(throws: InputError("deadline reminder at \"24:00\" is not a time such as 09:00 (or off)")) {
            try ReminderPolicy.defaults.applying(deadlineReminderAt: "24:00")
        }
        #expect(throws: InputError("overdue \"yes\" is neither on nor off")) { try ReminderPolicy.defaults.applying(overdue: "yes") }
    }

    @Test func durationsAreWrittenInTheLargestUnitThatDividesThem() throws {
        #expect(
            try ["90s", "5400s", "120m", "48h", "1d", "61s"].map { try PolicyDuration.parse($0, field: "x").description }
                == ["90s", "90m", "2h", "2d", "1d", "61s"])
    }

    @Test func theJSONDocumentRoundTripsAndNamesWhatIsWrong() throws {
        let policy = try ReminderPolicy.defaults.applying(approvalReminder: "p2=off", escalateAfter: "p3=90s", deadlineReminderAt: "08:30")
        let data = try JSONEncoder().encode(policy)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["approvalReminder"] as? [String: String] == ["p0": "30m", "p1": "4h", "p2": "off", "p3": "off"])
        #expect(object["escalateAfter"] as? [String: String] == ["p0": "2h", "p1": "1d", "p2": "off", "p3": "90s"])
        #expect(object["deadlineReminderAt"] as? String == "08:30")
        #expect(object["overdue"] as? Bool == true)
        #expect(try JSONDecoder().decode(ReminderPolicy.self, from: data) == policy)

        let missing =
            #"{"approvalReminder":{"p0":"1m","p1":"1m","p2":"1m"},"escalateAfter":{"p0":"off","p1":"off","p2":"off","p3":"off"},"deadlineReminderAt":"off","overdue":true}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ReminderPolicy.self, from: Data(missing.utf8)) }
        let wrong =
            #"{"approvalReminder":{"p0":"1x","p1":"1m","p2":"1m","p3":"1m"},"escalateAfter":{"p0":"off","p1":"off","p2":"off","p3":"off"},"deadlineReminderAt":"off","overdue":true}"#
        do {
            _ = try JSONDecoder().decode(ReminderPolicy.self, from: Data(wrong.utf8))
            Issue.record("decoded a bad duration")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.map(\.stringValue) == ["approvalReminder", "p0"])
            #expect(context.debugDescription.contains("approvalReminder.p0 \"1x\""))
        }
    }
}
