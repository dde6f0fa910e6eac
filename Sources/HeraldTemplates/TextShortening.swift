/// Cutting text on grapheme-cluster boundaries, so an emoji, a flag, a skin tone or a
/// combining mark is never split — with one bound: a cluster of more scalars than any script
/// or emoji sequence writes (`maxClusterScalars`: "a" and 999 variation selectors is one
/// cluster and four kilobytes) counts, and is cut, scalar by scalar, so that no text hides
/// kilobytes in one "character" (docs/templates.md).
public enum TextShortening {
    /// The marker that ends shortened text.
    public static let ellipsis = "..."

    /// The most scalars a cluster may hold and still count as one character. The longest
    /// emoji sequences (a family, a subdivision flag) hold 7; a letter with its marks a few.
    public static let maxClusterScalars = 16

    /// Chat previews: text longer than `limit` characters becomes its first `limit`
    /// characters followed by `...`.
    public static func preview(_ text: String, limit: Int = 100) -> String {
        let points = cutPoints(text, upTo: max(0, limit) + 1)
        guard points.count > limit else { return text }
        return limit <= 0 ? ellipsis : String(text.unicodeScalars[..<points[limit - 1]]) + ellipsis
    }

    /// The longest version of `text` that `fits`: the text itself when it fits, otherwise
    /// its longest prefix followed by `...` that does (down to just `...`).
    /// `fits` must be monotonic: if a text fits, every shorter one does too.
    public static func shorten(_ text: String, toFit fits: (String) -> Bool) -> String {
        if fits(text) { return text }
        let points = cutPoints(text)
        func prefix(_ count: Int) -> String {
            count == 0 ? ellipsis : String(text.unicodeScalars[..<points[count - 1]]) + ellipsis
        }
        var low = 0
        var high = points.count - 1  // `low` characters always fit (or low == 0); all of them do not.
        while low < high {
            let middle = (low + high + 1) / 2
            if fits(prefix(middle)) {
                low = middle
            } else {
                high = middle - 1
            }
        }
        return prefix(low)
    }

    /// Where each character ends (a grapheme cluster, or each scalar of a cluster longer
    /// than `maxClusterScalars`), in order, at most `limit` of them.
    static func cutPoints(_ text: String, upTo limit: Int = .max) -> [String.Index] {
        var points: [String.Index] = []
        var start = text.startIndex
        while start < text.endIndex, points.count < limit {
            let end = text.index(after: start)
            let scalars = text.unicodeScalars[start..<end]
            if scalars.count > maxClusterScalars {
                var index = scalars.startIndex
                while index < end, points.count < limit {
                    index = text.unicodeScalars.index(after: index)
                    points.append(index)
                }
            } else {
                points.append(end)
            }
            start = end
        }
        return points
    }
}
