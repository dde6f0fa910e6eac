import Foundation
import HeraldCore
import HeraldPostgres

/// One line of a person's preferences: an event on an app, immediate, digest or off, and who
/// decided.
public struct PreferenceEntry: Sendable, Equatable, Codable {
    public let event: EventKind
    public let app: AppKind
    public let mode: PushMode
    /// Whether it is pushed at all (immediate or in the digest), as the first preferences said.
    public let enabled: Bool
    public let origin: NotificationPreferences.Origin
    /// It asks the person to act: a tenant's `digest` does not gather it.
    public let asksToAct: Bool
    /// By push, by email or both (docs/notifications.md#email); nil for the tenant's defaults.
    public var channel: NotificationChannel? = nil
}

/// A person's setting for one conversation, which wins over their chat.message setting.
public struct ConversationPreference: Sendable, Equatable, Codable {
    public let conversationId: UUID
    public let name: String?
    public let mode: PushMode
}

/// What a person wants pushed, and when not.
public struct PreferenceSummary: Sendable, Equatable, Codable {
    /// Nil for the tenant's defaults.
    public let person: PersonReference?
    public let entries: [PreferenceEntry]
    /// How long their digest gathers (`1h` …, `daily HH:MM`); nil for the tenant.
    public let digestWindow: String?
    /// `push` or `email`: where their digest goes (docs/notifications.md#digests-by-email); nil for the tenant.
    public var digestChannel: String? = nil
    /// Their settings of single conversations; nil for the tenant.
    public let conversations: [ConversationPreference]?
    public let quietHours: QuietHoursRecord?
    /// Whether others see them online and when last seen (the live channel); nil for the tenant.
    public let showPresence: Bool?
}

/// Quiet hours as the API and `--json` show them.
public struct QuietHoursRecord: Sendable, Equatable, Codable {
    public let window: String
    public let days: [String]
    public let timeZone: String

    public init(_ hours: QuietHours, timeZone: String) {
        window = "\(hours.start)-\(hours.end)"
        days = hours.days.sorted().map(\.name)
        self.timeZone = timeZone
    }
}

extension TenantSession {
    /// Every event on every app it reaches, with the setting in effect for `person` (or,
    /// for nil, the tenant's defaults), and their quiet hours.
    /// - Parameter viewer: who looks, when not the person themself: a conversation's name is
    ///   shown only to those who take part in it (`AccessPolicy.mayTakePart`), nil otherwise.
    public func preferences(for person: Person?, viewer: AccessPolicy? = nil) async throws -> PreferenceSummary {
        // Without a person, no setting of one's own is read: what is left is the tenant's.
        let preferences = try await storedPreferences(for: person?.id)
        var channels: [String: NotificationChannel] = [:]
        if let person { channels = try await self.channels(of: person.id) }
        let entries = EventKind.allCases.flatMap { event in
            event.apps.map { app in
                let (mode, origin) = preferences.setting(event, app: app)
                var entry = PreferenceEntry(
                    event: event, app: app, mode: mode, enabled: mode != .off, origin: origin,
                    asksToAct: NotificationPreferences.asksToAct(event, app: app))
                if person != nil { entry.channel = channels["\(event.rawValue)=\(app.rawValue)"] ?? .push }
                return entry
            }
        }
        var hours: QuietHoursRecord?
        if let person, let window = try await quietHours(of: person) { hours = QuietHoursRecord(window, timeZone: person.timeZone) }
        var shown: Bool?
        var window: String?
        var conversations: [ConversationPreference]?
        var digestChannel: String?
        if let person {
            let row = try await connection.query(
                "SELECT show_presence, digest_window, digest_channel FROM people WHERE tenant_id = \(tenantID) AND id = \(person.id)"
            ).first
            shown = try row?.decode(Bool.self, at: 0)
            window = try row?.decode(String.self, at: 1)
            digestChannel = try row?.decode(String.self, at: 2)
            conversations = try await connection.query(
                """
                SELECT cp.conversation_id, CASE WHEN \(conversationNamesFor: viewer, of: person.id) THEN c.name END, cp.push_mode
                FROM conversation_participants cp
                JOIN conversations c ON c.tenant_id = cp.tenant_id AND c.id = cp.conversation_id
                WHERE cp.tenant_id = \(tenantID) AND cp.person_id = \(person.id) AND cp.push_mode IS NOT NULL AND cp.left_at IS NULL
                ORDER BY c.name NULLS LAST, cp.conversation_id
                """
            ).compactMap { row in
                let (id, name, mode) = try row.decode((UUID, String?, String).self)
                return PushMode(rawValue: mode).map { ConversationPreference(conversationId: id, name: name, mode: $0) }
            }
        }
        var summary = PreferenceSummary(
            person: person?.reference, entries: entries, digestWindow: window, conversations: conversations, quietHours: hours,
            showPresence: shown)
        summary.digestChannel = digestChannel
        return summary
    }

    func storedPreferences(for person: UUID?) async throws -> NotificationPreferences {
        let rows = try await connection.query(
            """
            SELECT CASE WHEN person_id IS NULL THEN 'tenant:' ELSE 'own:' END || event || '=' || app || '=' || mode
            FROM notification_preferences
            WHERE tenant_id = \(tenantID) AND (person_id IS NULL OR person_id = \(person))
            """)
        return NotificationPreferences(entries: try rows.map { try $0.decode(String.self, at: 0) })
    }

    /// Sets how pushes of `event` on `app` (every app it reaches, for nil) go out, for
    /// `person`, or for the whole tenant (nil: `AccessPolicy.maySetTenantDefaults`).
    /// - Throws: `InputError` when the event never reaches that app; `StoreError.forbidden`
    ///   when `actor` may not set the tenant's defaults.
    public func setPreference(_ event: EventKind, app: AppKind?, mode: PushMode, for person: Person?, by actor: Person?) async throws {
        if person == nil, let actor, !AccessPolicy(actor).maySetTenantDefaults {
            throw StoreError(.forbidden, "\(actor.email) may not set the tenant's defaults: only an admin may")
        }
        if let app, !event.apps.contains(app) {
            throw InputError(
                "\(event.rawValue) never reaches the \(app.rawValue) app (only the \(event.apps.map(\.rawValue).joined(separator: " and ")) app)")
        }
        let apps = app.map { [$0] } ?? event.apps
        try await connection.query(
            """
            INSERT INTO notification_preferences (tenant_id, id, person_id, event, app, mode, updated_by)
            SELECT \(tenantID), gen_random_uuid(), \(person?.id), \(event.rawValue), a, \(mode.rawValue), \(actor?.id)
            FROM unnest(\(apps.map(\.rawValue))::text[]) AS a
            ON CONFLICT ON CONSTRAINT notification_preferences_once
                DO UPDATE SET mode = EXCLUDED.mode, updated_by = EXCLUDED.updated_by, updated_at = now()
            """)
    }

    /// Sets how long `person`'s digest gathers (docs/notifications.md). Digests open now keep
    /// the end they had.
    public func setDigestWindow(_ window: DigestWindow, for person: Person) async throws {
        try await connection.query(
            "UPDATE people SET digest_window = \(window.description) WHERE tenant_id = \(tenantID) AND id = \(person.id)")
    }

    /// Sends `person`'s digest by email instead of a push (`email`), or pushes it again (`push`).
    public func setDigestChannel(email: Bool, for person: Person) async throws {
        try await connection.query(
            "UPDATE people SET digest_channel = \(email ? "email" : "push") WHERE tenant_id = \(tenantID) AND id = \(person.id)")
    }

    /// Sets (or, with nil, removes) `person`'s setting for one conversation they take part in.
    /// - Throws: `StoreError.notFound` when they take no part in it.
    public func setConversationMode(_ mode: PushMode?, conversation: UUID, for person: Person) async throws {
        _ = try await participantConversation(conversation, actor: person, withUnread: false)
        try await connection.query(
            """
            UPDATE conversation_participants SET push_mode = \(mode?.rawValue)
            WHERE tenant_id = \(tenantID) AND conversation_id = \(conversation) AND person_id = \(person.id)
            """)
    }

    /// A person's quiet hours, or nil.
    public func quietHours(of person: Person) async throws -> QuietHours? {
        let rows = try await connection.query(
            """
            SELECT to_char(starts_at, 'HH24:MI'), to_char(ends_at, 'HH24:MI'), days FROM quiet_hours
            WHERE tenant_id = \(tenantID) AND person_id = \(person.id)
            """)
        guard let row = rows.first else { return nil }
        let (starts, ends, days) = try row.decode((String, String, String).self)
        return try? QuietHours.parse("\(starts)-\(ends)", days: days)
    }

    /// Sets (or, with nil, removes) a person's quiet hours.
    public func setQuietHours(_ hours: QuietHours?, for person: Person) async throws {
        guard let hours else {
            try await connection.query("DELETE FROM quiet_hours WHERE tenant_id = \(tenantID) AND person_id = \(person.id)")
            return
        }
        try await connection.query(
            """
            INSERT INTO quiet_hours (tenant_id, person_id, starts_at, ends_at, days)
            VALUES (\(tenantID), \(person.id), \(hours.start.description)::time, \(hours.end.description)::time, \(hours.daysText))
            ON CONFLICT (tenant_id, person_id)
                DO UPDATE SET starts_at = EXCLUDED.starts_at, ends_at = EXCLUDED.ends_at, days = EXCLUDED.days, updated_at = now()
            """)
    }
}
