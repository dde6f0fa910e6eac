/// Text from anyone made safe to place in HTML, in an element or a quoted attribute.
///
/// The escaping looks at each Unicode scalar, never at a `Character`: a `Character` is a
/// whole grapheme cluster, and a prepend mark before `<` (U+0600), or a combining mark after
/// `"` (U+0301), makes a cluster that equals none of the five characters below, so an escape
/// that compares `Character`s lets markup through. The browser's HTML parser reads scalars
/// (code points), and so does this.
public enum HTMLText {
    /// `text` with `&`, `<`, `>`, `"` and `'` written as character references; `text`
    /// itself when it has none.
    public static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: isEscaped) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The five are ASCII, so a UTF-8 byte equal to one of them is that scalar (a byte of a
    /// multi-byte sequence is never below 0x80).
    private static func isEscaped(_ byte: UInt8) -> Bool {
        byte == 0x26 || byte == 0x3C || byte == 0x3E || byte == 0x22 || byte == 0x27
    }
}
