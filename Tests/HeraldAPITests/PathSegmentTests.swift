import Foundation
import Testing

@testable import HeraldAPI

/// `pathSegment` (a `Location` or `Link` header's part: an email, a cursor) encodes as
/// Foundation's percent-encoding does with the same characters allowed, byte for byte.
@Suite struct PathSegmentTests {
    static let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~@:")

    @Test(arguments: [
        "", "milo@bench.test", "a+b@x.test", "MTc5NTg2MDAwMDAwMDAwMCAwMWEyMjFhZi1jYzQzLTdmMmE", "100% sure?", "a/b c&d=e#f",
        "é✓👩🏽‍💻", "<script>", "\u{0}\u{1}\u{7f}", "~._-:@"
    ])
    func encodesAsFoundationDoes(_ text: String) {
        #expect(pathSegment(text) == text.addingPercentEncoding(withAllowedCharacters: Self.allowed))
    }

    @Test func everyASCIIByteIsKeptOrEncoded() {
        let every = String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self)
        #expect(pathSegment(every) == every.addingPercentEncoding(withAllowedCharacters: Self.allowed))
    }
}
