import Foundation

/// A JSON value.
public enum JSONNode: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number's text, as JSON writes it.
    case number(String)
    case string(String)
    case array([JSONNode])
    case object([String: JSONNode])

    /// A value being built: containers are filled after they are handed out.
    final class Reference {
        enum Storage {
            case empty
            case value(JSONNode)
            case array([Reference])
            case object([String: Reference])
        }

        var storage = Storage.empty

        var node: JSONNode {
            switch storage {
            case .empty: .object([:])
            case .value(let node): node
            case .array(let items): .array(items.map(\.node))
            case .object(let members): .object(members.mapValues(\.node))
            }
        }

        func makeObject() {
            if case .object = storage { return }
            storage = .object([:])
        }

        func makeArray() {
            if case .array = storage { return }
            storage = .array([])
        }

        func set(_ key: String, _ child: Reference) {
            guard case .object(var members) = storage else { return }
            storage = .empty
            members[key] = child
            storage = .object(members)
        }

        func append(_ child: Reference) {
            guard case .array(var items) = storage else { return }
            storage = .empty
            items.append(child)
            storage = .array(items)
        }

        var count: Int {
            if case .array(let items) = storage { return items.count }
            return 0
        }
    }
}

extension JSONWriter {
    /// `node`, with keys in sorted order; `indent`: the level to indent at, or nil for none.
    mutating func node(_ node: JSONNode, indent: Int?) {
        switch node {
        case .null: raw("null")
        case .bool(let value): value ? raw("true") : raw("false")
        case .number(let text): json(text)
        case .string(let text): string(text)
        case .array(let items):
            guard !items.isEmpty else { return raw("[]") }
            raw("[")
            for (index, item) in items.enumerated() {
                if index > 0 { raw(",") }
                newline(indent.map { $0 + 1 })
                self.node(item, indent: indent.map { $0 + 1 })
            }
            newline(indent)
            raw("]")
        case .object(let members):
            guard !members.isEmpty else { return raw("{}") }
            raw("{")
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { raw(",") }
                newline(indent.map { $0 + 1 })
                string(key)
                indent == nil ? raw(":") : raw(" : ")
                // (A key comes from `keys`, so its value is there.)
                self.node(members[key] ?? .null, indent: indent.map { $0 + 1 })
            }
            newline(indent)
            raw("}")
        }
    }

    private mutating func newline(_ level: Int?) {
        guard let level else { return }
        raw("\n")
        for _ in 0..<level { raw("  ") }
    }
}

extension JSONNode {
    /// The value as a whole number, if it is one (`2`, and `2.0` or `2e0` too, as JSON means them).
    public var integer: Int64? {
        guard case .number(let text) = self else { return nil }
        if let value = Int64(text) { return value }
        return Double(text).flatMap { Int64(exactly: $0) }
    }

    /// What kind of value it is, as an error says it.
    public var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
