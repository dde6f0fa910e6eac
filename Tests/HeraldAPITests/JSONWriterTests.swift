import Foundation
import HeraldCore
import Testing

@testable import HeraldAPI

/// The objects the API writes by hand (`JSONWritable`) come out byte for byte as
/// `JSONBody.encoder` writes them.
@Suite struct JSONWriterTests {
    /// Text that exercises every escape: each control character, quotes, backslashes,
    /// slashes, non-ASCII (accents, CJK, emoji, a combining mark), U+2028, DEL.
    static let awkwardTexts: [String] =
        (0..<0x20).map { "a\(String(UnicodeScalar(UInt8($0))))b" } + [
            "", "plain", "quote \" and backslash \\ and slash / and </script>", "\u{7F}", "\u{2028}\u{2029}",
            "Zoë Ångström", "会議の承認", "👩‍👩‍👧 family", "e\u{301}", "\\u0000 as text", "\"\"\"", "tab\tnew\nline\r"
        ]

    static func activity(name: String, person: String, team: String, version: Int, seconds: Double) -> ActivityRecord {
        ActivityRecord(
            id: UUID(), team: .init(id: UUID(), slug: "crew-\(version)", name: team), name: name,
            priority: Priority.allCases[version % Priority.allCases.count], deadline: LocalDate("2026-12-0\(1 + version % 9)")!,
            status: ActivityStatus.allCases[version % ActivityStatus.allCases.count], version: version,
            manager: .init(id: UUID(), email: "m\(version)@example.com", name: person),
            assignee: .init(id: UUID(), email: "a@example.com", name: name),
            createdAt: Date(timeIntervalSince1970: seconds), updatedAt: Date(timeIntervalSince1970: seconds + 3_600.75))
    }

    static func written(_ value: some JSONWritable) -> String {
        var writer = JSONWriter()
        writer.value(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    static func encoded(_ value: some Encodable) throws -> String {
        String(decoding: try JSONBody.encoder.encode(value), as: UTF8.self)
    }

    /// Ids (written digit by digit into a buffer): as Foundation writes them, lower-cased, as
    /// text, appended after what a buffer held, and as a JSON value; the extremes too.
    @Test func idsAreWrittenAsFoundationAndTheEncoderWriteThem() throws {
        var generator = SystemRandomNumberGenerator()
        let extremes = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!]
        for id in extremes + (0..<2_000).map({ _ in UUID() }) + (0..<100).map({ _ in UUID.v7(at: Date(), using: &generator) }) {
            let expected = id.uuidString.lowercased()
            #expect(id.lowercasedString == expected)
            var bytes = Array("held:".utf8)
            id.appendLowercased(to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == "held:" + expected)
            var writer = JSONWriter()
            writer.raw("[")
            writer.uuid(id)
            writer.raw("]")
            #expect(String(decoding: writer.bytes, as: UTF8.self) == (try Self.encoded([id])))
        }
    }

    @Test(arguments: awkwardTexts)
    func anActivityIsWrittenAsTheEncoderWritesIt(text: String) throws {
        let record = Self.activity(name: text, person: text, team: text, version: text.unicodeScalars.count, seconds: 1_795_000_000.5)
        #expect(Self.written(record) == (try Self.encoded(record)))
    }

    @Test func pagesWithAndWithoutANextCursorAreWrittenAsTheEncoderWritesThem() throws {
        // Dates from before 1582 and far ahead, and negative instants, too.
        let items = [-62_135_596_800.0, -12_219_292_800.0, 0, 1_795_000_000.999, 253_402_300_799].enumerated().map { index, seconds in
            Self.activity(name: "Activity \(index)", person: "P/\(index)", team: "Team \"\(index)\"", version: index * 1_000_003, seconds: seconds)
        }
        for page in [
            PageBody(items: items, next: "opaque/cursor+=="), PageBody(items: items, next: nil), PageBody(items: [ActivityRecord](), next: nil)
        ] {
            #expect(Self.written(page) == (try Self.encoded(page)))
        }
    }

    /// The outbox's activity payload (written by the store with `JSONWriter.text(of:)`, read
    /// by the dispatcher with `JSONDecoder`): the encoder's bytes, with and without its
    /// optional fields, with no recipient, one, or several.
    @Test(arguments: awkwardTexts)
    func anActivityEventPayloadIsWrittenAsTheEncoderWritesIt(text: String) throws {
        let person = PersonReference(id: UUID(), email: "p@example.com", name: text)
        let recipients = (0..<3).map { ActivityEventPayload.Recipient(id: UUID(), app: AppKind.allCases[$0 % 2]) }
        for (index, reason) in [nil, text].enumerated() {
            for count in [0, 1, 3] {
                let payload = ActivityEventPayload(
                    event: EventKind.allCases[(count + index) % EventKind.allCases.count], activityID: UUID(), teamID: UUID(), teamName: text,
                    activityName: text, priority: .p0, deadline: LocalDate("2027-0\(1 + count)-2\(index)")!, status: .completionRequested,
                    actor: person, manager: person, assignee: person, recipients: Array(recipients.prefix(count)), reason: reason,
                    occurredAt: Date(timeIntervalSince1970: 1_795_000_000.123 - Double(count) * 2e9),
                    waitingSince: index == 0 ? nil : Date(timeIntervalSince1970: -1.5), version: count == 1 ? nil : 7 + count)
                let written = JSONWriter.text(of: payload)
                #expect(written == (try Self.encoded(payload)))
                #expect(try JSONDecoder().decode(ActivityEventPayload.self, from: Data(written.utf8)) == payload)
            }
        }
    }

    /// Inbox items as the encoder writes them: with and without the activity, a digest and a
    /// priority; every engagement from none to all, with and without devices; awkward words.
    @Test func inboxItemsAreWrittenAsTheEncoderWritesThem() throws {
        let at = Date(timeIntervalSince1970: 1_790_000_000.125)
        var engagements = [InboxEngagement()]
        var full = InboxEngagement()
        full.delivered(at: at, device: UUID())
        full.apply(.archive, at: at + 1, device: nil)
        _ = full.opened(at: at + 2, device: UUID(), action: "approve")
        engagements.append(full)
        var seen = InboxEngagement()
        seen.apply(.seen, at: at, device: UUID())
        engagements.append(seen)
        for (index, text) in Self.awkwardTexts.enumerated() {
            let activity =
                index % 3 == 0
                ? nil
                : InboxItem.ActivityNow(
                    id: UUID(), name: text, status: ActivityStatus.allCases[index % ActivityStatus.allCases.count],
                    priority: Priority.allCases[index % 4], version: index)
            let item = InboxItem(
                id: UUID(), event: "activity.assigned", app: index % 2 == 0 ? .member : .manager, title: text, body: "body " + text,
                priority: index % 5 == 0 ? nil : Priority.allCases[index % 4], activityID: UUID(), activity: activity,
                actions: Array(ActivityAction.allCases.prefix(index % 3)), createdAt: at + Double(index),
                digestID: index % 4 == 0 ? UUID() : nil, engagement: engagements[index % engagements.count])
            #expect(Self.written(item) == (try Self.encoded(item)))
        }
    }
}
