import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird
import NIOCore

/// Request bodies in, JSON out: the one place where the API reads and writes JSON.
enum JSONBody {
    /// Decodes a JSON object into `Body`, refusing (with one problem naming every field):
    /// another content type (415), bytes that are not UTF-8 JSON (400), fields `Body` does not
    /// have (422), and fields of the wrong type or missing (422).
    static func decode<Body: Decodable & FieldNamed>(_ type: Body.Type, from request: Request, context: APIContext) async throws -> Body {
        try decode(type, bytes: try await collect(request, context: context), request: request)
    }

    /// The body's bytes, up to the context's limit (413 past it).
    static func collect(_ request: Request, context: APIContext) async throws -> [UInt8] {
        Array(try await request.body.collect(upTo: context.maxUploadSize).readableBytesView)
    }

    /// `decode` on a body already read.
    static func decode<Body: Decodable & FieldNamed>(_ type: Body.Type, bytes: [UInt8], request: Request) throws -> Body {
        guard isJSON(request.headers[.contentType]) else {
            throw Problem(.unsupportedMediaType, "Unsupported media type", detail: "send the body as application/json")
        }
        let data = Data(bytes)
        guard String(validating: data, as: UTF8.self) != nil, JSONSyntax.isValid(bytes),
            let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) as? [String: Any]
        else {
            throw Problem(.badRequest, "Malformed JSON", detail: "the body is not a JSON object in UTF-8")
        }
        let unknown = Body.unknownFields(of: object)
        guard unknown.isEmpty else {
            throw Problem(
                .unprocessableContent, "Unknown fields", detail: "the body has fields this request does not take",
                errors: unknown.map { .init(field: $0, detail: "not a field of this request") })
        }
        do {
            return try decoder.decode(Body.self, from: data)
        } catch let error as DecodingError {
            throw Problem(
                .unprocessableContent, "Invalid fields", detail: "some fields are missing or of the wrong type", errors: [fieldError(error)])
        }
    }

    /// `application/json`, with or without parameters (`; charset=utf-8`), in any case; not
    /// a type that merely starts the same (`application/jsonp`).
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let mediaType = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return mediaType.trimmingCharacters(in: .whitespaces).lowercased() == "application/json"
    }

    private static func fieldError(_ error: DecodingError) -> Problem.FieldError {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return .init(field: path(context.codingPath + [key]), detail: "required")
        case .typeMismatch(let type, let context):
            return .init(field: path(context.codingPath), detail: "must be \(describe(type))")
        case .valueNotFound(let type, let context):
            return .init(field: path(context.codingPath), detail: "must be \(describe(type)), not null")
        case .dataCorrupted(let context):
            // The policy's fields say what they allow; Foundation's own words do not help.
            let said = context.underlyingError == nil && !context.debugDescription.isEmpty && !context.debugDescription.hasPrefix("Attempted")
            return .init(field: path(context.codingPath), detail: said ? context.debugDescription : "is not valid")
        @unknown default:
            return .init(field: "", detail: "is not valid")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Bool.Type: "true or false"
        case is [String].Type: "a list of strings"
        default: "another type"
        }
    }

    static let decoder = JSONDecoder()

    static let encoder = HeraldJSONEncoder()

    /// A JSON response.
    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try bytes(value))))
    }

    /// A JSON answer, as `Idempotency-Key` keeps it.
    static func answer(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Answer {
        var headers = headers
        headers[.contentType] = "application/json"
        return Answer(
            status: status.code, headers: Dictionary(headers.map { ($0.name.rawName, $0.value) }, uniquingKeysWith: { $1 }),
            body: try bytes(value))
    }

    /// `value`'s JSON: written by hand for the hot objects (`JSONWritable`), else by `encoder`.
    static func bytes(_ value: some Encodable) throws -> [UInt8] {
        if let writable = value as? any JSONWritable {
            // A page of fifty activities is 25 KB: room for it at once, not five doublings.
            var writer = JSONWriter(capacity: (value as? any SizedJSON)?.capacityHint ?? 1_024)
            writer.value(writable)
            return writer.bytes
        }
        return Array(try encoder.encode(value))
    }
}

/// A value whose JSON is long enough to be worth sizing the buffer for.
protocol SizedJSON {
    /// About how many bytes its JSON takes.
    var capacityHint: Int { get }
}

extension PageBody: SizedJSON {
    var capacityHint: Int { 64 + items.count * 640 }
}

/// A request body that says which fields it has, so that others are refused: at the top, and
/// in each object within it that the contract closes (`additionalProperties: false`).
protocol FieldNamed {
    static var fieldNames: Set<String> { get }
    /// The fields of objects within the body, by where they are: a field's name (`quietHours`),
    /// and `[]` after it for each item of a list (`events[]`). An object absent, or of another
    /// form there (a string, a map), is not looked at.
    static var nestedFieldNames: [String: Set<String>] { get }
}

extension FieldNamed {
    static var nestedFieldNames: [String: Set<String>] { [:] }

    /// The fields `object` has that the body does not take, each named by its place
    /// (`quietHours.dayz`, `events[0].appp`), in order.
    static func unknownFields(of object: [String: Any]) -> [String] {
        var unknown = object.keys.filter { !fieldNames.contains($0) }.sorted()
        for (path, names) in nestedFieldNames.sorted(by: { $0.key < $1.key }) {
            let isList = path.hasSuffix("[]")
            let field = isList ? String(path.dropLast(2)) : path
            let found: [(String, [String: Any])]
            if isList {
                found = ((object[field] as? [Any]) ?? []).enumerated().compactMap { index, item in
                    (item as? [String: Any]).map { ("\(field)[\(index)]", $0) }
                }
            } else {
                found = (object[field] as? [String: Any]).map { [(field, $0)] } ?? []
            }
            for (place, nested) in found {
                unknown += nested.keys.filter { !names.contains($0) }.sorted().map { "\(place).\($0)" }
            }
        }
        return unknown
    }
}
