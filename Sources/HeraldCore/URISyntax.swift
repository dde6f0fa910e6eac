/// A URI as RFC 3986 §2 writes one: ASCII letters, digits and `-._~:/?#[]@!$&'()*+,;=`, and
/// `%` followed by two hex digits for anything else. What Foundation would quietly encode or
/// rewrite (a space, `^`, `é`, a line break, `%zz`) is refused instead, so the URL stored is
/// the URL given, and its length is what it says.
enum URISyntax {
    /// Why `text` is not a URI as written; nil when it is one.
    static func refusal(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else {
                    return "% at character \(index + 1) is not followed by two hex digits"
                }
                index += 3
                continue
            }
            guard allowed(byte) else {
                let shown =
                    byte < 0x20 || byte == 0x7F
                    ? "a control character" : byte >= 0x80 ? "a character beyond ASCII" : "\"\(Character(UnicodeScalar(byte)))\""
                return "\(shown) at character \(index + 1) must be percent-encoded"
            }
            index += 1
        }
        return nil
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    private static func allowed(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        default: "-._~:/?#[]@!$&'()*+,;=".utf8.contains(byte)
        }
    }
}
