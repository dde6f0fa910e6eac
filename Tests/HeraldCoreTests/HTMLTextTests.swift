import HeraldCore
import Testing

@Suite struct HTMLTextTests {
    @Test func plainTextIsLeftAsItIs() {
        for text in ["", "Ship v2", "Zoë 👩🏽‍💻 שלום", "e\u{301}"] {
            #expect(HTMLText.escaped(text) == text)
        }
    }

    @Test func theFiveAreEscaped() {
        #expect(HTMLText.escaped("Tom & Jerry <3 \"quoted\" it's >") == "Tom &amp; Jerry &lt;3 &quot;quoted&quot; it&#39;s &gt;")
    }

    /// A prepend mark before `<` and a combining mark after `"` each make one grapheme cluster
    /// with the character they touch; escaping by `Character` lets both through.
    @Test func marksThatJoinAClusterDoNotHideMarkup() {
        let planted = "lunch? \u{600}<meta http-equiv=refresh content=0;url=http://127.0.0.1:9/x\u{600}>"
        let escaped = HTMLText.escaped(planted)
        #expect(!escaped.unicodeScalars.contains("<"))
        #expect(!escaped.unicodeScalars.contains(">"))
        #expect(escaped == "lunch? \u{600}&lt;meta http-equiv=refresh content=0;url=http://127.0.0.1:9/x\u{600}&gt;")
        #expect(HTMLText.escaped("\"\u{301} onmouseover=x") == "&quot;\u{301} onmouseover=x")
        #expect(HTMLText.escaped("'\u{301}&\u{301}<\u{20DD}") == "&#39;\u{301}&amp;\u{301}&lt;\u{20DD}")
    }
}
