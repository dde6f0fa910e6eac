import Foundation
import HeraldCore
import Testing

/// The one push payload (docs/apps.md, "What a push carries"): its keys, their naming rule, and
/// the table the apps read, held together.
struct PushPayloadTests {
    /// The `data` keys docs/apps.md's table names, in order of their first mention.
    static func documentedKeys() throws -> [String] {
        let apps = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/apps.md").standardized
        let text = try String(contentsOf: apps, encoding: .utf8)
        guard let start = text.range(of: "| `data` key | value |") else { return [] }
        var keys: [String] = []
        for line in text[start.upperBound...].split(separator: "\n").dropFirst() {
            guard line.hasPrefix("|") else { break }
            // The first cell: the keys, each in backticks.
            let cell = line.dropFirst().prefix { $0 != "|" }
            for (index, part) in cell.split(separator: "`", omittingEmptySubsequences: false).enumerated() where index % 2 == 1 {
                keys.append(String(part))
            }
        }
        return keys
    }

    @Test func theDocumentedTableIsTheType() throws {
        let documented = try Self.documentedKeys()
        #expect(!documented.isEmpty)
        #expect(documented == PushPayload.Field.allCases.map(\.rawValue))
    }

    /// One rule: lower camel case, an id ends in `Id` (`Ids`), except the shipped chat keys.
    @Test func everyKeyFollowsTheOneRuleButTheShippedOnes() {
        for field in PushPayload.Field.allCases where !PushPayload.Field.shippedSpellings.contains(field) {
            let name = field.rawValue
            #expect(name.first?.isLowercase == true, "\(name)")
            #expect(name.allSatisfy { $0.isLetter }, "\(name)")
            #expect(!name.contains("ID"), "\(name): an id ends in Id")
        }
        #expect(PushPayload.Field.shippedSpellings.map(\.rawValue).sorted() == ["conversationID", "messageID", "senderID"])
    }

    @Test func anActivityPushCarriesWhatItsButtonsNeed() {
        let (activity, team) = (UUID(), UUID())
        let payload = PushPayload.activity(
            .activityCompletionRequested, activityID: activity, teamID: team, priority: .p0, status: .completionRequested, version: 4
        ).offering(.activityApproval)
        #expect(
            payload.fields == [
                "type": "activity_completion_requested", "activityId": activity.lowercasedString, "teamId": team.lowercasedString,
                "priority": "p0", "status": "completion_requested", "version": "4", "category": "ACTIVITY_APPROVAL"
            ])
        #expect(payload.path == "/activities/\(activity.lowercasedString)")
        #expect(payload.offering(nil)[.category] == nil)
    }

    @Test func aChatPushAndADigestKeepTheirKeys() throws {
        let (conversation, message, sender) = (UUID(), UUID(), UUID())
        let chat = PushPayload.chatMessage(
            conversationID: conversation, messageID: message, senderID: sender, isGroup: false, sentAtMilliseconds: 1_795_303_800_000)
        #expect(
            chat.fields == [
                "type": "new_message", "conversationID": conversation.lowercasedString, "messageID": message.lowercasedString,
                "senderID": sender.lowercasedString, "isGroup": "false", "timestamp": "1795303800000"
            ])
        #expect(chat.path == "/conversations/\(conversation.lowercasedString)")

        let (digest, items) = (UUID(), [UUID(), UUID()])
        let summary = PushPayload.digest(id: digest, notificationIDs: items, teamID: nil, conversationID: conversation)
        #expect(summary.isDigest)
        #expect(summary[.count] == "2")
        #expect(summary[.notificationIds] == items.map(\.lowercasedString).joined(separator: ","))
        #expect(summary[.teamId] == nil)
        #expect(summary.path == "/")

        // Stored and read back as the flat object it is sent as.
        let text = try JSONEncoder().encode(summary)
        #expect(try JSONDecoder().decode([String: String].self, from: text) == summary.fields)
        #expect(try JSONDecoder().decode(PushPayload.self, from: text) == summary)
    }
}
