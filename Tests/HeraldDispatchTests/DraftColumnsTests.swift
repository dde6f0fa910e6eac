import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// Fan-out binds what an event's recipients share once per distinct content and the rest
/// per recipient; each notification must still get exactly its own words, data and badge.
@Suite struct DraftColumnsTests {
    static let event = UUID()
    static let at = Date(timeIntervalSince1970: 1_795_000_000)

    static func draft(
        _ recipient: UUID, title: String = "Ops", body: String = "Alice: hi", data: PushPayload = ["type": "message"],
        badge: Int = 1, sound: Bool = true, event: UUID = event
    ) -> NotificationDraft {
        NotificationDraft(
            eventID: event, kind: .chatMessage, recipientID: recipient, app: .member, teamID: nil, activityID: nil,
            conversationID: nil,
            content: NotificationContent(title: title, body: body, data: data, badge: badge, sound: sound, threadID: "ops"),
            eventAt: at, suppressedReason: nil)
    }

    @Test func recipientsWithTheSameContentShareOneEntryWhateverTheirBadge() throws {
        let (a, b, c, d, e) = (UUID(), UUID(), UUID(), UUID(), UUID())
        let columns = try DraftColumns([
            Self.draft(a, badge: 1), Self.draft(b, badge: 7), Self.draft(c, title: "Opérations"),
            Self.draft(d, badge: 3), Self.draft(e, data: ["type": "message", "muted": "1"], sound: false)
        ])
        #expect(columns.shared.map(\.title) == ["Ops", "Opérations", "Ops"])
        #expect(columns.content == [1, 1, 2, 1, 3])
        #expect(columns.shared.map(\.data) == [#"{"type":"message"}"#, #"{"type":"message"}"#, #"{"muted":"1","type":"message"}"#])
        #expect(columns.shared.map(\.sound) == [true, true, false])
    }

    @Test func differentEventsNeverShare() throws {
        let other = UUID()
        let columns = try DraftColumns([Self.draft(UUID()), Self.draft(UUID(), event: other), Self.draft(UUID())])
        #expect(columns.shared.map(\.eventID) == [Self.event, other])
        #expect(columns.content == [1, 2, 1])
    }

    @Test func noDraftsBindEmptyColumns() throws {
        let columns = try DraftColumns([])
        #expect(columns.shared.isEmpty && columns.content.isEmpty)
    }

    /// Written through the real statement: each notification reads its content back by its
    /// recipient, the shared parts from the right entry and the badge from its own row.
    @Test func eachNotificationIsWrittenWithItsOwnContent() async throws {
        try await DispatchHarness.with { harness in
            let tenant = harness.tenant.id
            let people = try await harness.store.withTenant(harness.tenant) { session in
                var ids: [String: UUID] = [:]
                for email in ["alice", "chidi", "dana", "erin"] { ids[email] = try await session.person(email: "\(email)@acme.test").id }
                return ids
            }
            // A real event (its id places the notifications in their week's partition).
            let activity = try await harness.assign()
            let event = try await harness.store.pool.query("SELECT id FROM outbox WHERE activity_id = \(activity.id)").single()
                .decode(UUID.self, at: 0)
            func person(_ name: String) throws -> UUID { try #require(people[name]) }
            let drafts = [
                Self.draft(try person("alice"), title: "Ops", badge: 4, event: event),
                Self.draft(try person("chidi"), title: "運用", body: "アリス: こんにちは", badge: 2, event: event),
                Self.draft(try person("dana"), title: "Ops", data: ["type": "message", "muted": "1"], badge: 9, sound: false, event: event),
                Self.draft(try person("erin"), title: "Ops", badge: 0, event: event)
            ]
            _ = try await harness.store.pool.withTransaction(setup: Store.tenantScope(tenant)) { connection in
                try await DeliveryQueue.write(drafts, events: [event], tenant: tenant, deadline: .seconds(60), claim: nil, on: connection)
            }
            let rows = try await harness.store.pool.query(
                """
                SELECT recipient_id, title, body, data::text, badge, sound, event_at, kind, thread_id
                FROM notifications WHERE tenant_id = \(tenant) AND event_id = \(event)
                """)
            var written: [UUID: (String, String, String, Int, Bool, Date, String, String)] = [:]
            for row in rows {
                let (recipient, title, body, data, badge, sound, at, kind, thread) =
                    try row.decode((UUID, String, String, String, Int, Bool, Date, String, String).self)
                written[recipient] = (title, body, data, badge, sound, at, kind, thread)
            }
            #expect(written.count == 4)
            for draft in drafts {
                let row = try #require(written[draft.recipientID])
                #expect(row.0 == draft.content.title)
                #expect(row.1 == draft.content.body)
                #expect(try JSONDecoder().decode(PushPayload.self, from: Data(row.2.utf8)) == draft.content.data)
                #expect(row.3 == draft.content.badge)
                #expect(row.4 == draft.content.sound)
                #expect(row.5 == Self.at)
                #expect(row.6 == EventKind.chatMessage.rawValue)
                #expect(row.7 == "ops")
            }
        }
    }
}
