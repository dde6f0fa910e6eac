import Foundation

/// The policy as JSON (the API's document, and what the database keeps): durations and the
/// time as people write them, `off` where a reminder is off.
///
///     {"approvalReminder": {"p0": "30m", "p1": "4h", "p2": "24h", "p3": "off"},
///      "escalateAfter": {"p0": "2h", "p1": "24h", "p2": "off", "p3": "off"},
///      "deadlineReminderAt": "09:00", "overdue": true, "unopened": {"p0": "15m", "p1": "4h"}}
///
/// Every field is required when decoding but `unopened`, which came later (a document without
/// it, and a priority it does not name, is off); a wrong value names its path.
extension ReminderPolicy: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case approvalReminder, escalateAfter, deadlineReminderAt, overdue, unopened
    }

    /// The document's fields.
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))

    private struct PriorityKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ priority: Priority) { stringValue = priority.rawValue }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func perPriority(_ key: CodingKeys, required: Bool = true) throws -> PerPriority<PolicyDuration?> {
            let nested = try container.nestedContainer(keyedBy: PriorityKey.self, forKey: key)
            if let unknown = nested.allKeys.first(where: { Priority(rawValue: $0.stringValue) == nil }) {
                throw DecodingError.dataCorruptedError(
                    forKey: unknown, in: nested, debugDescription: "\(unknown.stringValue) is not a priority (p0, p1, p2, p3)")
            }
            var values: [Priority: PolicyDuration?] = [:]
            for priority in Priority.allCases {
                guard required || nested.contains(PriorityKey(priority)) else { continue }
                let text = try nested.decode(String.self, forKey: PriorityKey(priority))
                do {
                    values[priority] = try PolicyDuration.orOff(text, field: "\(key.stringValue).\(priority.rawValue)")
                } catch let error as InputError {
                    throw DecodingError.dataCorruptedError(forKey: PriorityKey(priority), in: nested, debugDescription: error.description)
                }
            }
            return PerPriority(p0: values[.p0] ?? nil, p1: values[.p1] ?? nil, p2: values[.p2] ?? nil, p3: values[.p3] ?? nil)
        }
        let approvalReminder = try perPriority(.approvalReminder)
        let escalateAfter = try perPriority(.escalateAfter)
        let time = try container.decode(String.self, forKey: .deadlineReminderAt)
        let deadlineReminderAt: TimeOfDay?
        do {
            deadlineReminderAt = try Self.timeOrOff(time, field: "deadlineReminderAt")
        } catch let error as InputError {
            throw DecodingError.dataCorruptedError(forKey: .deadlineReminderAt, in: container, debugDescription: error.description)
        }
        self.init(
            approvalReminder: approvalReminder, escalateAfter: escalateAfter, deadlineReminderAt: deadlineReminderAt,
            overdue: try container.decode(Bool.self, forKey: .overdue),
            unopened: container.contains(.unopened) ? try perPriority(.unopened, required: false) : .allOff)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        for (key, values) in [(CodingKeys.approvalReminder, approvalReminder), (.escalateAfter, escalateAfter), (.unopened, unopened)] {
            var nested = container.nestedContainer(keyedBy: PriorityKey.self, forKey: key)
            for priority in Priority.allCases {
                try nested.encode(values[priority]?.description ?? "off", forKey: PriorityKey(priority))
            }
        }
        try container.encode(deadlineReminderAt?.description ?? "off", forKey: .deadlineReminderAt)
        try container.encode(overdue, forKey: .overdue)
    }
}
