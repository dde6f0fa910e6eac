import Crypto
import Foundation
import HeraldCore
import HeraldPostgres

/// What registering a token did.
public enum DeviceRegistrationOutcome: Sendable, Equatable {
    /// A token not seen before.
    case registered
    /// The same owner registered it again: its times and details were refreshed.
    case refreshed
    /// It was logged out, and is active again.
    case restored
    /// It belonged to someone else, and now belongs to the new owner.
    case moved(from: PersonReference)
}

extension TenantSession {
    /// Registers a push token (or an FCM installation id, `address: .fid`; or a browser's
    /// Web Push `subscription`, whose endpoint is its token) for a person's app; a known one is
    /// refreshed (which also makes a stale device fresh again, and takes a subscription's new
    /// keys), restored after a logout, or moved to its new owner.
    /// - Throws: `InputError`; `StoreError.notFound` for an unknown person;
    ///   `StoreError.invalid` for a token its provider retired.
    public func registerDevice(
        email: String, token: String, address: DeviceAddress = .token, app: AppKind, platform: Platform, provider: PushProvider,
        kind: DeviceKind = .alert, subscription: WebPushSubscription? = nil
    ) async throws -> (Device, DeviceRegistrationOutcome) {
        let keys = try Self.webPushKeys(subscription, platform: platform, provider: provider)
        let token = try Input.deviceAddress(subscription?.endpoint ?? token, address, provider: provider)
        let kind = try Input.deviceKind(kind.rawValue, platform: platform, provider: provider, address: address)
        let owner = try await person(email: email)
        for _ in 0..<2 {
            if let existing = try await device(token: token, address: address, provider: provider, locking: true) {
                if existing.kind == .liveActivityUpdate {
                    throw StoreError(
                        .conflict,
                        "token \(existing.tokenPreview) is the update token of an activity's Live Activity; register a new token")
                }
                if let retired = existing.deactivatedAt {
                    throw StoreError(
                        .invalid,
                        "token \(existing.tokenPreview) was retired by \(provider.rawValue) on \(retired.formatted(.iso8601)) "
                            + "(\(existing.deactivationReason ?? "no reason")); the app must obtain a new token")
                }
                let outcome: DeviceRegistrationOutcome =
                    existing.owner.id != owner.id ? .moved(from: existing.owner) : existing.removedAt != nil ? .restored : .refreshed
                try await connection.query(
                    """
                    UPDATE devices SET person_id = \(owner.id), app = \(app.rawValue), platform = \(platform.rawValue),
                        kind = \(kind.rawValue), updated_at = now(), last_seen_at = now(), removed_at = NULL,
                        webpush_p256dh = \(keys?.p256dh), webpush_auth = \(keys?.auth)
                    WHERE tenant_id = \(tenantID) AND id = \(existing.id)
                    """)
                return (try await device(id: existing.id), outcome)
            }
            let inserted = try await connection.query(
                """
                INSERT INTO devices (tenant_id, id, person_id, token, address, app, platform, provider, kind, webpush_p256dh, webpush_auth)
                VALUES (\(tenantID), \(UUID.v7()), \(owner.id), \(token), \(address.rawValue), \(app.rawValue), \(platform.rawValue),
                        \(provider.rawValue), \(kind.rawValue), \(keys?.p256dh), \(keys?.auth))
                ON CONFLICT (tenant_id, provider, address, token) DO NOTHING
                RETURNING id
                """)
            if let row = inserted.first {
                return (try await device(id: try row.decode(UUID.self, at: 0)), .registered)
            }
            // Registered concurrently by another command: take the update path.
        }
        throw StoreError(.conflict, "the token was registered concurrently; try again")
    }

    /// A Web Push device's keys as stored (base64url), checked: the subscription comes with
    /// provider `webpush` only, and always with it, on platform `web`, its `p256dh` a point on
    /// P-256 (the rest of it `WebPushSubscription` checked).
    static func webPushKeys(_ subscription: WebPushSubscription?, platform: Platform, provider: PushProvider) throws -> (
        p256dh: String, auth: String
    )? {
        guard provider.takesSubscription else {
            guard subscription == nil else { throw InputError("a subscription is a browser's: give provider webpush", field: "provider") }
            return nil
        }
        guard let subscription else {
            throw InputError("a Web Push device registers the browser's subscription: {endpoint, keys: {p256dh, auth}}", field: "subscription")
        }
        guard platform == .web else { throw InputError("a Web Push subscription is a browser's: give platform web", field: "platform") }
        guard (try? P256.KeyAgreement.PublicKey(x963Representation: subscription.p256dh)) != nil else {
            throw InputError("p256dh is not a point on the P-256 curve", field: WebPushSubscription.p256dhField)
        }
        return (Base64URL.encode(subscription.p256dh), Base64URL.encode(subscription.auth))
    }

    /// Logs a token out, as `viewer` may (`AccessPolicy.maySeePerson`: their own devices, or
    /// anyone's for those who run the tenant): it receives nothing until it is registered again.
    /// - Throws: `StoreError.notFound` when no active device the viewer may see has the token
    ///   (someone else's is not found, as a token nobody has).
    @discardableResult
    public func removeDevice(token: String, viewer: AccessPolicy) async throws -> [Device] {
        let token = try Input.token(token)
        let rows = try await connection.query(
            """
            UPDATE devices d SET removed_at = now(), updated_at = now()
            WHERE d.tenant_id = \(tenantID) AND d.token = \(token) AND d.removed_at IS NULL AND \(deviceVisibleTo: viewer)
            RETURNING d.id
            """)
        guard !rows.isEmpty else {
            throw StoreError(.notFound, "no registered device has token \(TokenDisplay.truncated(token)) in tenant \(tenant.slug)")
        }
        var removed: [Device] = []
        for row in rows { removed.append(try await device(id: try row.decode(UUID.self, at: 0))) }
        return removed
    }

    /// Devices, newest first, as `viewer` may see them (`AccessPolicy.maySeePerson`): of one
    /// person, or (nil) of everyone the viewer may see (the whole tenant for those who run it,
    /// their own for anyone else).
    /// - Throws: `StoreError.notFound` for a person the viewer may not see, exactly as for
    ///   someone who does not exist.
    public func devices(viewer: AccessPolicy, email: String? = nil) async throws -> [Device] {
        var owner: UUID?
        if let email { owner = try await person(email: email, viewer: viewer).id }
        return try await connection.query(
            """
            SELECT \(unsafeRaw: Self.deviceColumns) \(unsafeRaw: Self.deviceFrom)
            WHERE d.tenant_id = \(tenantID) AND (\(owner)::uuid IS NULL OR d.person_id = \(owner)) AND \(deviceVisibleTo: viewer)
              AND d.kind <> 'email'  -- a person's address is theirs, not a device of theirs
            ORDER BY p.email, d.created_at DESC
            """
        ).map(device(_:))
    }

    func device(id: UUID) async throws -> Device {
        try device(
            try await connection.query(
                "SELECT \(unsafeRaw: Self.deviceColumns) \(unsafeRaw: Self.deviceFrom) WHERE d.tenant_id = \(tenantID) AND d.id = \(id)"
            ).single())
    }

    func device(token: String, address: DeviceAddress, provider: PushProvider, locking: Bool) async throws -> Device? {
        try await connection.query(
            """
            SELECT \(unsafeRaw: Self.deviceColumns) \(unsafeRaw: Self.deviceFrom)
            WHERE d.tenant_id = \(tenantID) AND d.provider = \(provider.rawValue) AND d.address = \(address.rawValue) AND d.token = \(token)
            \(unsafeRaw: locking ? "FOR UPDATE OF d" : "")
            """
        ).first.map(device(_:))
    }

    static let deviceColumns = """
        d.id, p.id, p.email, p.display_name, d.token, d.app, d.platform, d.provider, d.created_at, d.updated_at,
        d.last_seen_at, d.removed_at, d.deactivated_at, d.deactivation_reason, d.address, now(), d.kind, d.activity_id
        """
    static let deviceFrom = "FROM devices d JOIN people p ON p.tenant_id = d.tenant_id AND p.id = d.person_id"

    /// A device of `deviceColumns`, stale or not by the store's freshness at the database's clock.
    func device(_ row: PostgresRow) throws -> Device {
        let (id, ownerID, email, name, token, app, platform, provider) =
            try row.decode((UUID, UUID, String, String, String, String, String, String).self)
        let lastSeenAt = try row.decode(Date.self, at: 10)
        return Device(
            id: id, owner: PersonReference(id: ownerID, email: email, name: name), token: token,
            address: try Self.decodeEnum(try row.decode(String.self, at: 14)), app: try Self.decodeEnum(app), platform: try Self.decodeEnum(platform),
            provider: try Self.decodeEnum(provider), createdAt: try row.decode(Date.self, at: 8), updatedAt: try row.decode(Date.self, at: 9),
            lastSeenAt: lastSeenAt, removedAt: try row.decode(Date?.self, at: 11), deactivatedAt: try row.decode(Date?.self, at: 12),
            deactivationReason: try row.decode(String?.self, at: 13),
            isStale: freshness.isStale(lastSeenAt: lastSeenAt, at: try row.decode(Date.self, at: 15)),
            kind: try Self.decodeEnum(try row.decode(String.self, at: 16)), activityID: try row.decode(UUID?.self, at: 17))
    }
}
