import Foundation
import HeraldAPI
import HeraldTestSupport
import Testing

/// Where the contract closes an object (`additionalProperties: false`), the server refuses a
/// field it does not name with 422, naming the field by its place — at any depth, not only at
/// the top (`{"quietHours": {"window": "22:00-07:00", "dayz": ["mon"]}}` was taken as quiet
/// hours on every day, and an event's `"appp"` applied it to every app).
@Suite struct ClosedObjectsTests {
    /// A place in a request body: the operation, and the path of an object within its body
    /// (`$` the body, `.name` a field, `[]` a list's items).
    struct Place: Hashable, CustomStringConvertible {
        let operation: String
        let path: String
        var description: String { "\(operation) \(path)" }
    }

    /// Every object the contract closes within a JSON request body, the body itself aside (its
    /// own fields are checked alike for every operation, by `JSONBody.decode`).
    static func closedObjects(in contract: [String: Any]) -> Set<Place> {
        let schemas = (contract["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]
        func resolve(_ schema: [String: Any]) -> [String: Any] {
            var schema = schema
            while let reference = schema["$ref"] as? String, let name = reference.split(separator: "/").last,
                let target = schemas[String(name)] as? [String: Any]
            {
                schema = target
            }
            return schema
        }
        var places: Set<Place> = []
        func walk(_ given: [String: Any], _ path: String, _ operation: String) {
            let schema = resolve(given)
            for key in ["oneOf", "anyOf", "allOf"] {
                for part in schema[key] as? [[String: Any]] ?? [] { walk(part, path, operation) }
            }
            if schema["additionalProperties"] as? Bool == false, path != "$" { places.insert(Place(operation: operation, path: path)) }
            for (name, property) in schema["properties"] as? [String: [String: Any]] ?? [:] {
                walk(property, path == "$" ? name : "\(path).\(name)", operation)
            }
            if let items = schema["items"] as? [String: Any] { walk(items, path + "[]", operation) }
        }
        for (path, operations) in contract["paths"] as? [String: [String: Any]] ?? [:] {
            for (method, operation) in operations {
                let body = ((operation as? [String: Any])?["requestBody"] as? [String: Any])?["content"] as? [String: Any]
                guard let schema = (body?["application/json"] as? [String: Any])?["schema"] as? [String: Any] else { continue }
                walk(schema, "$", "\(method.uppercased()) \(path)")
            }
        }
        return places
    }

    /// A valid body of each operation with a closed object within, every such object present.
    static var bodies: [String: (path: String, admin: Bool, body: [String: Any])] {
        [
            "PUT /v1/me/preferences": (
                "/v1/me/preferences", false,
                [
                    "events": [["event": "activity.started", "app": "manager", "mode": "digest"]], "digest": ["window": "1h"],
                    "quietHours": ["window": "22:00-07:00", "days": ["mon"]]
                ]
            ),
            "PUT /v1/policy": (
                "/v1/policy", true,
                [
                    "approvalReminder": ["p0": "30m", "p1": "4h", "p2": "24h", "p3": "off"],
                    "escalateAfter": ["p0": "2h", "p1": "24h", "p2": "off", "p3": "off"], "deadlineReminderAt": "09:00", "overdue": true,
                    "unopened": ["p0": "15m"]
                ]
            )
        ]
    }

    /// `body` with `name` added to the object at `path` (a list's first item for `[]`).
    static func adding(_ name: String, at path: String, to body: [String: Any]) -> [String: Any] {
        var parts = path.split(separator: ".").map(String.init)
        let first = parts.removeFirst()
        let isList = first.hasSuffix("[]")
        let field = isList ? String(first.dropLast(2)) : first
        var copy = body
        if isList, var items = body[field] as? [[String: Any]], let item = items.first {
            items[0] = parts.isEmpty ? item.merging([name: true]) { $1 } : adding(name, at: parts.joined(separator: "."), to: item)
            copy[field] = items
        } else if let object = body[field] as? [String: Any] {
            copy[field] = parts.isEmpty ? object.merging([name: true]) { $1 } : adding(name, at: parts.joined(separator: "."), to: object)
        }
        return copy
    }

    @Test func everyClosedObjectOfTheContractRefusesAFieldItDoesNotName() async throws {
        try await APIHarness.with { api in
            let contract = try await api.call("GET", "/openapi.json", token: nil).json
            let places = Self.closedObjects(in: contract)
            #expect(!places.isEmpty)
            let uncovered = places.filter { Self.bodies[$0.operation] == nil }
            #expect(uncovered.isEmpty, "closed objects with no body to try them with: \(uncovered.sorted { $0.description < $1.description })")
            let chidi = try await api.token("chidi@acme.test")
            let ada = try await api.token("root@acme.test")
            for place in places.sorted(by: { $0.description < $1.description }) {
                guard let (path, admin, body) = Self.bodies[place.operation] else { continue }
                let method = String(place.operation.prefix { $0 != " " })
                let valid = try await api.call(method, path, token: admin ? ada : chidi, json: body)
                #expect(valid.status == 200, "\(place): the valid body was refused: \(valid.json)")
                let refused = try await api.call(method, path, token: admin ? ada : chidi, json: Self.adding("unexpected", at: place.path, to: body))
                let named = (refused.json["errors"] as? [[String: Any]])?.compactMap { $0["field"] as? String } ?? []
                let expected = place.path.replacingOccurrences(of: "[]", with: "[0]") + ".unexpected"
                #expect(refused.status == 422 && refused.isProblem && named == [expected], "\(place): \(refused.status) \(named)")
            }
        }
    }

    /// The two bodies.
    @Test func aMisspelledNestedFieldIsRefusedAndNothingIsWritten() async throws {
        try await APIHarness.with { api in
            let chidi = try await api.token("chidi@acme.test")
            let days = try await api.call(
                "PUT", "/v1/me/preferences", token: chidi, json: ["quietHours": ["window": "22:00-07:00", "dayz": ["mon"]]])
            #expect(days.status == 422 && (days.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "quietHours.dayz")
            let app = try await api.call(
                "PUT", "/v1/me/preferences", token: chidi, json: ["events": [["event": "activity.approved", "appp": "manager", "mode": "off"]]])
            #expect(app.status == 422 && (app.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "events[0].appp")
            let after = try await api.call("GET", "/v1/me/preferences", token: chidi)
            #expect(after.json["quietHours"] == nil || after.json["quietHours"] is NSNull, "\(after.json)")
            let approved = (after.json["entries"] as? [[String: Any]])?.first { $0["event"] as? String == "activity.approved" }
            #expect(approved?["mode"] as? String == "immediate")
        }
    }
}
