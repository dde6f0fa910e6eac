import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The webhooks' feeder writes its one-row cursor only with messages (or far behind): under a
/// held snapshot each write was a version every round read again (docs/operating/faults.md).
@Suite struct WebhookCursorTests {
    static func stored(_ store: Store) async throws -> Int64 {
        try await store.pool.query("SELECT position FROM webhook_cursor WHERE id = 1").single().decode(Int64.self, at: 0)
    }

    @Test func theCursorRowIsWrittenWithMessagesAndTheFeederStartsWhereItReached() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            let start = try await Self.stored(store)
            // No endpoint: the rows make no message; the row stays, the feeder's own floor moves on.
            _ = try await acme.assign()
            try await store.sequenceLive()
            let floor = WebhookFeedFloor()
            try await store.feedWebhooks(floor: floor) { _, _ in [] }
            let head = try await store.liveHead()
            #expect(head > start && floor.position == head)
            #expect(try await Self.stored(store) == start)
            // The next round starts there: nothing to read again.
            #expect(try await store.feedWebhooks(floor: floor) { _, _ in [] } == 0)

            // With an endpoint, the round that writes messages writes the cursor with them.
            let root = try await acme.run { try await $0.person(email: "root@acme.test") }
            let endpoint = try await acme.run {
                try await $0.createWebhook(
                    viewer: AccessPolicy(root), url: "https://hooks.acme.test/herald", events: ["activity.*"], description: nil,
                    secret: "whsec_" + Data(repeating: 7, count: 32).base64EncodedString())
            }
            _ = try await acme.assign()
            try await store.sequenceLive()
            let read = try await store.feedWebhooks(floor: floor) { rows, subscriptions in
                rows.map { row in
                    WebhookMessageDraft(
                        tenantID: row.tenantID, id: UUID.v7(), type: "activity.assigned", body: "{}", createdAt: row.createdAt,
                        endpoints: subscriptions.map(\.endpointID))
                }
            }
            let written = try await store.pool.query("SELECT count(*)::int FROM webhook_messages WHERE endpoint_id = \(endpoint.id)").single()
                .decode(Int.self, at: 0)
            #expect(read > 0 && written == read)
            #expect(try await Self.stored(store) == (try await store.liveHead()))
            #expect(floor.position == (try await store.liveHead()))
            // A feeder that starts afresh starts at the stored cursor, and finds nothing left.
            #expect(try await store.feedWebhooks(floor: WebhookFeedFloor()) { _, _ in [] } == 0)
        }
    }
}
