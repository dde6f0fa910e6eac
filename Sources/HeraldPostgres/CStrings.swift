import Foundation

func firstLine(of text: String) -> String {
    String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: true).first ?? "")
}

/// Calls `body` with a NULL-terminated array of C strings that live for the call.
func withCStrings<Result>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result) -> Result {
    withOptionalCStrings(strings.map { Optional($0) }) { pointers in body(pointers) }
}

/// Like `withCStrings`, with NULL entries for `nil` (libpq's SQL NULL parameter).
func withOptionalCStrings<Result>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result) -> Result {
    var owned: [UnsafeMutablePointer<CChar>?] = strings.map { $0.map(cString) }
    owned.append(nil)
    defer { for pointer in owned { free(pointer) } }
    return owned.withUnsafeBufferPointer { buffer in
        buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) { body($0) }
    }
}

/// A copy of `text` as a C string (freed by the caller). A U+0000 in it becomes U+FFFD:
/// PostgreSQL's text cannot hold it, and as a C string everything after it would be cut off
/// (silently for a text value; an array literal would lose its end and fail the whole
/// statement, as a provider's error message with `\u0000` in it did an acknowledgement).
func cString(_ text: String) -> UnsafeMutablePointer<CChar> {
    var text = text
    return text.withUTF8 { utf8 in
        let count = utf8.count
        guard let base = utf8.baseAddress, memchr(base, 0, count) != nil else {
            guard let copy = malloc(count + 1)?.assumingMemoryBound(to: UInt8.self) else { fatalError("out of memory") }
            if let base = utf8.baseAddress { copy.update(from: base, count: count) }
            copy[count] = 0
            return UnsafeMutableRawPointer(copy).assumingMemoryBound(to: CChar.self)
        }
        // Rare: each zero byte takes three (U+FFFD in UTF-8).
        guard let copy = malloc(3 * count + 1)?.assumingMemoryBound(to: UInt8.self) else { fatalError("out of memory") }
        var end = 0
        for byte in UnsafeBufferPointer(start: base, count: count) {
            if byte == 0 {
                copy[end] = 0xEF
                copy[end + 1] = 0xBF
                copy[end + 2] = 0xBD
                end += 3
            } else {
                copy[end] = byte
                end += 1
            }
        }
        copy[end] = 0
        return UnsafeMutableRawPointer(copy).assumingMemoryBound(to: CChar.self)
    }
}
