import Foundation
import HeraldCore
import Testing

@testable import HeraldLive

/// The frames written by hand (`JSONWritable`) come out byte for byte as `HeraldJSONEncoder`
/// writes them.
@Suite struct LiveFrameJSONTests {
    /// Each control character, quotes, backslashes, slashes, non-ASCII, U+2028, DEL.
    static let awkwardTexts: [String] =
        (0..<0x20).map { "a\(String(UnicodeScalar(UInt8($0))))b@x.test" } + [
            "", "alice@acme.test", "quote \" and backslash \\ and slash / and </script>", "\u{7F}", "\u{2028}\u{2029}",
            "Zoë Ångström", "会議の承認", "👩‍👩‍👧 family", "e\u{301}"
        ]

    @Test func presenceFramesAreWrittenAsTheEncoderWritesThem() throws {
        let instants: [Date?] = [
            nil, Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_795_000_000.999), Date(timeIntervalSince1970: -86_401.5),
            Date(timeIntervalSinceReferenceDate: 0)
        ]
        var entries: [LiveFrame.PresenceEntry] = []
        for (index, text) in Self.awkwardTexts.enumerated() {
            let change = LivePresenceChange(
                tenant: UUID(), person: UUID(), email: text, online: index % 2 == 0, lastSeen: instants[index % instants.count], shown: true)
            entries.append(LiveFrame.PresenceEntry(change))
        }
        let encoder = HeraldJSONEncoder()
        for frame in [LiveFrame.Presence([]), LiveFrame.Presence(Array(entries.prefix(1))), LiveFrame.Presence(entries)] {
            #expect(LiveFrame.text(frame) == (try encoder.string(frame)))
        }
        for entry in entries {
            #expect(JSONWriter.text(of: entry) == (try encoder.string(entry)))
        }
    }
}
