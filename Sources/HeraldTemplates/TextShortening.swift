/// Cutting text on grapheme-cluster boundaries, so an emoji, a flag, a skin tone or a
/// combining mark is never split.
public enum TextShortening {
    /// The marker that ends shortened text.
    public static let ellipsis = "..."

    /// Chat previews: text longer than `limit` characters becomes its first `limit`
    /// characters followed by `...`.
    public static func preview(_ text: String, limit: Int = 100) -> String {
        guard text.count > limit else { return text }
        return String(text.prefix(max(0, limit))) + ellipsis
    }

    /// The longest version of `text` that `fits`: the text itself when it fits, otherwise
    /// its longest prefix followed by `...` that does (down to just `...`).
    /// `fits` must be monotonic: if a text fits, every shorter one does too.
    public static func shorten(_ text: String, toFit fits: (String) -> Bool) -> String {
        if fits(text) { return text }
        let characters = Array(text)
        var low = 0
        var high = characters.count - 1  // `low` characters always fit (or low == 0).
        while low < high {
            let middle = (low + high + 1) / 2
            if fits(String(characters[..<middle]) + ellipsis) {
                low = middle
            } else {
                high = middle - 1
            }
        }
        return String(characters[..<low]) + ellipsis
    }
}
