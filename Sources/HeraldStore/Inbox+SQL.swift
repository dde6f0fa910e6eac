import Foundation
import HeraldCore
import HeraldPostgres

/// The inbox's rules as SQL (docs/inbox.md), each written once: which notifications are items,
/// which items the counts and the badge count, and the unread chat messages the badge adds.
extension PostgresQuery.StringInterpolation {
    /// `InboxItem.includes`, for a notification `alias`: about an activity, not a Live
    /// Activity's push nor a digest's own, and not turned off by its person. Word for word the
    /// predicate of the indexes of sql/0040_inbox.sql, so that the planner uses them.
    mutating func appendInterpolation(inboxItem alias: String) {
        appendLiteral(
            "\(alias).activity_id IS NOT NULL AND \(alias).live IS NULL AND \(alias).kind <> 'digest' "
                + "AND \(alias).decision IS DISTINCT FROM 'preference_off'")
    }

    /// ` AND` the item `alias` counts in the badge (`InboxEngagement.isUnread`): neither read
    /// nor archived.
    mutating func appendInterpolation(countedUnread alias: String) {
        appendLiteral(" AND \(alias).read_at IS NULL AND \(alias).archived_at IS NULL")
    }

    /// How many items `person` has that count in the badge, as a scalar subquery; `tenant` is a
    /// column or a bound value's SQL, as `person`.
    mutating func appendInterpolation(unreadItemsOf person: PersonTerm, tenant: String) {
        appendLiteral("(SELECT count(*) FROM notifications u WHERE u.tenant_id = \(tenant) AND u.recipient_id = ")
        appendTerm(person)
        appendLiteral(" AND ")
        appendInterpolation(inboxItem: "u")
        appendInterpolation(countedUnread: "u")
        appendLiteral(")")
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
