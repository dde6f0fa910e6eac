import Hummingbird

extension Parameters {
    /// A path segment's value, percent-decoded: the one way routes read a segment that is not an
    /// id (docs/api.md). An email may hold `?`, `/`, `#` and `%`, which a client writes as `%3F`,
    /// `%2F`, `%23` and `%25` (a Web Push device's token is a URL); a slug has nothing to decode.
    /// A segment whose escapes do not decode to UTF-8 is taken as written, and found by nobody.
    public func decoded(_ name: String) throws -> String {
        let given = try require(name)
        return given.removingPercentEncoding ?? given
    }
}
