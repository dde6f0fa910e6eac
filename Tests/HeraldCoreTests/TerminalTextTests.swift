import HeraldCore
import Testing

@Suite struct TerminalTextTests {
    @Test func textWithoutControlCharactersIsLeftAsItIs() {
        for text in ["", "Ship v2", "Zoë 👩🏽‍💻 שלום", "a\u{00A0}b", "line one\nline two\tend"] {
            #expect(TerminalText.escaped(text) == text)
        }
    }

    @Test func escapeSequencesAndCarriageReturnsAreWrittenVisibly() {
        #expect(TerminalText.escaped("\u{1B}[2J\u{1B}]0;owned\u{07}red") == "\\u{1b}[2J\\u{1b}]0;owned\\u{7}red")
        #expect(TerminalText.escaped("ok\rFAILED") == "ok\\u{d}FAILED")
        #expect(TerminalText.escaped("nul\u{0}del\u{7F}csi\u{9B}31m") == "nul\\u{0}del\\u{7f}csi\\u{9b}31m")
    }

    @Test func oneLineKeepsNoLineBreak() {
        #expect(TerminalText.escaped("a\nb\tc", .singleLine) == "a\\u{a}b\\u{9}c")
        #expect(TerminalText.escaped("a\nb\tc", .lines) == "a\nb\tc")
        #expect(TerminalText.escaped("one line", .singleLine) == "one line")
    }
}
