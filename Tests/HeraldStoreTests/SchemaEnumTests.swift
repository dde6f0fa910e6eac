import HeraldCore
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The core's enums and the schema's CHECK constraints name the same values: a status added
/// on one side only fails here, not in production.
struct SchemaEnumTests {
    @Test func everyEnumMatchesItsCheckConstraint() async throws {
        try await TestDatabase.withStore { store, _ in
            let expected: [(table: String, column: String, values: [String])] = [
                ("deliveries", "status", DeliveryStatus.allCases.map(\.rawValue)),
                ("deliveries", "provider", PushProvider.allCases.map(\.rawValue)),
                ("delivery_attempts", "outcome", AttemptOutcome.allCases.map(\.rawValue)),
                ("notifications", "status", NotificationStatus.allCases.map(\.rawValue)),
                ("notifications", "app", AppKind.allCases.map(\.rawValue)),
                ("devices", "app", AppKind.allCases.map(\.rawValue)),
                ("devices", "platform", Platform.allCases.map(\.rawValue)),
                ("devices", "provider", PushProvider.allCases.map(\.rawValue)),
                ("activities", "priority", Priority.allCases.map(\.rawValue)),
                ("activities", "status", ActivityStatus.allCases.map(\.rawValue)),
                ("team_members", "role", TeamRole.allCases.map(\.rawValue)),
                ("activity_transitions", "action", ActivityAction.allCases.map(\.rawValue)),
                ("conversations", "kind", ConversationKind.allCases.map(\.rawValue)),
                ("provider_pauses", "provider", PushProvider.allCases.map(\.rawValue)),
                ("credentials", "kind", CredentialKind.allCases.map(\.rawValue)),
                ("activity_timers", "kind", TimerKind.allCases.map(\.rawValue)),
                ("activity_timers", "status", TimerStatus.allCases.map(\.rawValue)),
                ("notifications", "decision", NotificationDecision.allCases.map(\.rawValue)),
                ("notification_preferences", "mode", PushMode.allCases.map(\.rawValue)),
                ("conversation_participants", "push_mode", PushMode.allCases.map(\.rawValue)),
                ("digests", "app", AppKind.allCases.map(\.rawValue)),
                ("digests", "status", DigestStatus.allCases.map(\.rawValue))
            ]
            for (table, column, values) in expected {
                let allowed = try await Self.allowedValues(table: table, column: column, pool: store.pool)
                #expect(allowed == Set(values), "\(table).\(column): the schema allows \(allowed.sorted()), the code has \(values.sorted())")
            }
        }
    }

    /// The quoted values of the one `IN (…)` CHECK constraint on a column.
    static func allowedValues(table: String, column: String, pool: PostgresPool) async throws -> Set<String> {
        let rows = try await pool.query(
            """
            SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
            JOIN pg_class t ON t.oid = c.conrelid
            JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = ANY(c.conkey)
            WHERE c.contype = 'c' AND t.relname = \(table) AND a.attname = \(column) AND cardinality(c.conkey) = 1
            """)
        let definitions = try rows.map { try $0.decode(String.self, at: 0) }.filter { $0.contains("ARRAY[") }
        #expect(definitions.count == 1, "\(table).\(column): \(definitions)")
        guard let definition = definitions.first else { return [] }
        // CHECK ((status = ANY (ARRAY['queued'::text, 'sent'::text])))
        return Set(
            definition.split(separator: "'", omittingEmptySubsequences: false).enumerated().compactMap { index, part in
                index % 2 == 1 ? String(part) : nil
            })
    }
}
