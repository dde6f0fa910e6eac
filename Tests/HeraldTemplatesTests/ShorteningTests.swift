import Foundation
import HeraldTemplates
import Testing

@Suite struct ShorteningTests {
    @Test func exactly100CharactersStayWhole() {
        let text = String(repeating: "a", count: 100)
        #expect(TextShortening.preview(text) == text)
    }

    @Test func a101CharacterMessageIsCutTo100PlusDots() {
        let text = String(repeating: "a", count: 100) + "b"
        #expect(TextShortening.preview(text) == String(repeating: "a", count: 100) + "...")
    }

    @Test(arguments: ["👩🏽‍💻", "🇫🇷", "👍🏿", "é", "❤️", "👨‍👩‍👧‍👦"])
    func clustersAtTheBoundaryAreNeverSplit(cluster: String) {
        let text = String(repeating: "x", count: 99) + cluster + cluster + "tail"
        let preview = TextShortening.preview(text)
        #expect(preview == String(repeating: "x", count: 99) + cluster + "...")
        #expect(preview.unicodeScalars.count == 99 + cluster.unicodeScalars.count + 3)
    }

    @Test func combiningMarksStayWithTheirLetter() {
        let decomposed = "e\u{301}"  // é as two scalars
        let text = String(repeating: "z", count: 99) + decomposed + "more"
        #expect(TextShortening.preview(text) == String(repeating: "z", count: 99) + decomposed + "...")
    }

    @Test func aFourKilobyteMessageFitsABudgetAndEndsWithDots() {
        let text = String(repeating: "Lorem ipsum 👩🏽‍💻 dolor ", count: 200)  // far over 4 KB
        #expect(text.utf8.count > 4096)
        let preview = TextShortening.preview(text)
        #expect(preview.count == 103 && preview.hasSuffix("..."))

        // The request around the body, as a JSON encoder would write it.
        func requestSize(_ body: String) -> Int {
            let object = ["message": ["token": String(repeating: "t", count: 180), "notification": ["title": "Alice", "body": body]]]
            return (try? JSONSerialization.data(withJSONObject: object).count) ?? Int.max
        }
        let fitted = TextShortening.shorten(text) { requestSize($0) <= 4096 }
        #expect(requestSize(fitted) <= 4096)
        #expect(fitted.hasSuffix("..."))
        #expect(requestSize(String(text.prefix(fitted.count - 3 + 1)) + "...") > 4096, "not the longest that fits")
        #expect(text.hasPrefix(fitted.dropLast(3)))
    }

    @Test func textThatFitsIsUntouchedAndNothingFitsLeavesDots() {
        #expect(TextShortening.shorten("short") { $0.utf8.count <= 10 } == "short")
        #expect(TextShortening.shorten("much too long") { $0.utf8.count <= 3 } == "...")
    }

    @Test func shorteningByBytesNeverSplitsAnEmoji() {
        let text = String(repeating: "👩🏽‍💻", count: 20)
        let fitted = TextShortening.shorten(text) { $0.utf8.count <= 50 }
        #expect(fitted.utf8.count <= 50)
        #expect(fitted.dropLast(3).allSatisfy { $0 == "👩🏽‍💻" })
    }

    /// One grapheme cluster of 1,000 scalars and 3,997 bytes ("a" and 999 variation
    /// selectors) is not one character: past `maxClusterScalars` each scalar counts, so the
    /// preview holds 100 of them and bytes cut it like any text.
    @Test func aClusterOfAThousandScalarsCountsByItsScalars() {
        let text = "a" + String(repeating: "\u{E0100}", count: 999)
        #expect(text.count == 1 && text.utf8.count == 3_997)
        let preview = TextShortening.preview(text)
        #expect(
            preview.unicodeScalars.count == 100 + 3 && preview.hasSuffix("...")
                && text.unicodeScalars.starts(with: preview.unicodeScalars.dropLast(3)))
        let fitted = TextShortening.shorten(text) { $0.utf8.count <= 1_000 }
        #expect(fitted.utf8.count <= 1_000 && fitted.utf8.count > 990 && fitted.unicodeScalars.first == "a")
        // A cluster of 16 scalars is still one character, never split.
        let family = "👨‍👩‍👧‍👦"
        let sixteen = "x" + String(repeating: "\u{301}", count: TextShortening.maxClusterScalars - 1)
        #expect(sixteen.count == 1)
        let text2 = String(repeating: sixteen, count: 101) + family
        #expect(TextShortening.preview(text2) == String(repeating: sixteen, count: 100) + "...")
    }
}
