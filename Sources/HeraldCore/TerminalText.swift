/// Text from outside made safe to write to a terminal or a text log.
///
/// `Input` refuses control characters in what people type, but a provider's error message,
/// rows written before those checks, and whatever a client sent the emulator may still hold
/// them. Written as they are, an escape sequence would recolour, move or clear the reader's
/// terminal (or set its title, or answer back into its input), a carriage return would
/// overwrite the line, and a newline would forge a row of a table or a line of a log. Every
/// control character (C0, DEL and C1) is written as a visible `\u{1b}` (Swift's spelling)
/// instead; everything else, emoji and right-to-left scripts included, is left as it is.
public enum TerminalText {
    /// Which line breaks survive.
    public enum Layout: Sendable {
        /// Newlines and tabs are kept: a message body printed on lines of its own.
        case lines
        /// Nothing is kept: one table cell, one log line, one error line.
        case singleLine
    }

    /// `text` with its control characters written as `\u{…}`; `text` itself when it has none.
    public static func escaped(_ text: String, _ layout: Layout = .lines) -> String {
        guard text.unicodeScalars.contains(where: { isEscaped($0, layout) }) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isEscaped(scalar, layout) {
                result.append(contentsOf: "\\u{\(String(scalar.value, radix: 16))}".unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    private static func isEscaped(_ scalar: Unicode.Scalar, _ layout: Layout) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: layout == .singleLine
        case 0x00...0x1F, 0x7F...0x9F: true
        default: false
        }
    }
}
