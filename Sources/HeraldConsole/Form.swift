import Foundation
import HeraldAPI
import Hummingbird

/// An `application/x-www-form-urlencoded` body, as the console's forms post it.
struct Form {
    private var fields: [String: String] = [:]

    init(_ request: Request, context: APIContext) async throws {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else {
            throw ConsoleRefusal(status: .unsupportedMediaType, heading: "Refused", detail: "Forms are posted as application/x-www-form-urlencoded.")
        }
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        guard let text = body.getString(at: body.readerIndex, length: body.readableBytes) else { return }
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]) else { continue }
            fields[name] = parts.count > 1 ? Self.decode(parts[1]) : ""
        }
    }

    subscript(name: String) -> String? { fields[name] }

    private static func decode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}

/// The request's cookies by name (the first of a name wins).
struct Cookies {
    private var values: [String: String] = [:]

    init(_ request: Request) {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                let name = parts[0].trimmingCharacters(in: .whitespaces)
                if values[name] == nil { values[name] = parts[1].trimmingCharacters(in: .whitespaces) }
            }
        }
    }

    subscript(name: String) -> String? { values[name] }
}
