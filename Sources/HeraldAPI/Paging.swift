import Foundation
import HeraldCore
import Hummingbird

/// Cursor paging as every list of the API does it: `limit` (1–200, default 50), the opaque
/// `cursor` of the page before, and a `Link: <…>; rel="next"` header that keeps the filters.
struct Paging {
    let limit: Int
    let cursor: PageCursor?

    init(_ query: Parameters) throws {
        limit = try field("limit") { try Self.limit(query.get("limit")) }
        cursor = try query.get("cursor").map { text in
            guard let cursor = PageCursor(token: text) else {
                throw Problem(
                    .unprocessableContent, "Invalid fields", detail: "the cursor is not one this server gave",
                    errors: [.init(field: "cursor", detail: "not a cursor from a Link header")])
            }
            return cursor
        }
    }

    /// `limit`: 1 to 200, default 50.
    static func limit(_ text: String?) throws -> Int {
        guard let text else { return 50 }
        guard let limit = Int(text), (1...200).contains(limit) else { throw InputError("limit must be a number from 1 to 200") }
        return limit
    }

    /// A page of `path` as JSON (`PageBody`), with the `Link` header of the next page, which
    /// keeps the `filters` the request had.
    func response<Item: Encodable>(_ items: [Item], next: PageCursor?, path: String, filters: [String], from query: Parameters) throws -> Response {
        var headers: HTTPFields = [:]
        let token = next?.token
        if let token {
            var parameters = [("limit", "\(limit)"), ("cursor", token)]
            for name in filters { if let value = query.get(name) { parameters.append((name, value)) } }
            let queryText = parameters.map { "\($0.0)=\(pathSegment($0.1))" }.joined(separator: "&")
            headers[.link] = "<\(path)?\(queryText)>; rel=\"next\""
        }
        return try JSONBody.response(PageBody(items: items, next: token), headers: headers)
    }
}

/// A page of a list: its items and the cursor of the next page (nil on the last; also in
/// the `Link` header).
struct PageBody<Item: Encodable>: Encodable {
    let items: [Item]
    let next: String?
}
