import Foundation
import HeraldCore
import HeraldPostgres

/// The inbox's rules as SQL (docs/inbox.md), each written once: which notifications are items,
/// the counts the badge reads and how fan-out adds to them, and the unread chat messages the
/// badge adds.
extension PostgresQuery.StringInterpolation {
    /// `InboxItem.includes`, for a notification `alias`: about an activity, not a Live
    /// Activity's push nor a digest's own, and not turned off by its person. Word for word the
    /// predicate of the indexes of sql/0040_inbox.sql, so that the planner uses them.
    mutating func appendInterpolation(inboxItem alias: String) {
        appendLiteral(
            "\(alias).activity_id IS NOT NULL AND \(alias).live IS NULL AND \(alias).kind <> 'digest' "
                + "AND \(alias).decision IS DISTINCT FROM 'preference_off'")
    }

    /// How many items `person` has that count in the badge (`InboxEngagement.isUnread`), as a
    /// scalar subquery of their row of `inbox_counts`; `tenant` is a column or a bound value's
    /// SQL, as `person`.
    mutating func appendInterpolation(unreadItemsOf person: PersonTerm, tenant: String) {
        appendLiteral("coalesce((SELECT ")
        appendInterpolation(unreadInCounts: "c")
        appendLiteral(" FROM inbox_counts c WHERE c.tenant_id = \(tenant) AND c.person_id = ")
        appendTerm(person)
        appendLiteral("), 0)")
    }

    /// Those of them not seen yet (`InboxEngagement.isCountedUnseen`).
    mutating func appendInterpolation(unseenItemsOf person: PersonTerm, tenant: String) {
        appendLiteral("coalesce((SELECT ")
        appendInterpolation(unseenInCounts: "c")
        appendLiteral(" FROM inbox_counts c WHERE c.tenant_id = \(tenant) AND c.person_id = ")
        appendTerm(person)
        appendLiteral("), 0)")
    }

    /// The unread items a row `alias` of `inbox_counts` counts, never fewer than none: the
    /// one reading of the row, for a subquery and for an update's `RETURNING` alike.
    mutating func appendInterpolation(unreadInCounts alias: String) {
        appendLiteral("greatest(0, \(alias).unread)")
    }

    /// The unseen items a row `alias` of `inbox_counts` counts, as `unreadInCounts`.
    mutating func appendInterpolation(unseenInCounts alias: String) {
        appendLiteral("greatest(0, \(alias).unseen)")
    }

    /// The CTE `counted` of a fan-out statement: the items among its `inserted` notifications,
    /// added to their people's counts, in the order of the people (two fan-outs never wait on
    /// each other's rows in a cycle).
    mutating func appendInterpolation(countingItemsOf inserted: String, tenant: UUID) {
        appendLiteral(
            """
            counted AS (
                INSERT INTO inbox_counts AS c (tenant_id, person_id, unread, unseen)
                SELECT\u{20}
            """)
        appendInterpolation(tenant)
        appendLiteral(", i.recipient_id, count(*), count(*) FROM \(inserted) i WHERE ")
        appendInterpolation(inboxItem: "i")
        appendLiteral(
            """
             GROUP BY i.recipient_id ORDER BY i.recipient_id
                ON CONFLICT (tenant_id, person_id) DO UPDATE SET unread = c.unread + excluded.unread, unseen = c.unseen + excluded.unseen
            )
            """)
    }

    /// How many messages `person` has not read in the conversations they take part in (not
    /// their own, not the system's), as a scalar subquery.
    mutating func appendInterpolation(unreadChatOf person: PersonTerm, tenant: String) {
        appendLiteral(
            """
            (SELECT count(*) FROM conversation_participants cp
             JOIN messages m ON m.tenant_id = cp.tenant_id AND m.conversation_id = cp.conversation_id
                            AND m.seq > cp.last_read_seq AND NOT m.is_system AND m.sender_id <> cp.person_id
             WHERE cp.tenant_id = \(tenant) AND cp.left_at IS NULL AND cp.person_id =\u{20}
            """)
        appendTerm(person)
        appendLiteral(")")
    }

    private mutating func appendTerm(_ term: PersonTerm) {
        switch term {
        case .column(let name): appendLiteral(name)
        case .value(let id): appendInterpolation(id)
        }
    }
}
