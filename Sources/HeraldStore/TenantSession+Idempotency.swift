import Foundation
import HeraldCore
import HeraldPostgres

/// What became of an `Idempotency-Key` when a request presented it.
public enum IdempotencyClaim: Sendable, Equatable {
    /// Not seen in the last 24 hours: this request answers it (then `completeIdempotencyKey`).
    case claimed
    /// Answered before, for the same body: give that answer again.
    case answered(status: Int, headers: [String: String], body: [UInt8])
    /// Used before with another body.
    case otherRequest
    /// Another request with this key is being answered right now.
    case inProgress
}

/// The answers kept for `Idempotency-Key` (24 hours, per credential and acting person: a
/// tenant key acting on behalf of two people keeps one answer for each).
extension TenantSession {
    public static let idempotencyWindow: Duration = .seconds(24 * 3_600)

    /// Claims `key` for a request whose method, path and body hash to `requestHash`, made with
    /// `credential` acting as `person` (nil: a tenant key acting as itself). A claim left
    /// unanswered for a minute (its server died) may be taken over.
    public func claimIdempotencyKey(_ key: String, credential: UUID, person: UUID?, requestHash: Data) async throws -> IdempotencyClaim {
        let person = person ?? Self.noPerson
        let window = Self.idempotencyWindow.timeInterval
        // Keys past the window are gone for good, so the table holds a day of keys at most.
        try await connection.query(
            "DELETE FROM idempotency_keys WHERE tenant_id = \(tenantID) AND created_at < now() - make_interval(secs => \(window))")
        let inserted = try await connection.query(
            """
            INSERT INTO idempotency_keys (tenant_id, credential_id, person_id, key, request_sha256)
            VALUES (\(tenantID), \(credential), \(person), \(key), \(requestHash))
            ON CONFLICT (tenant_id, credential_id, person_id, key) DO UPDATE SET request_sha256 = excluded.request_sha256, created_at = now()
                WHERE idempotency_keys.status IS NULL AND idempotency_keys.created_at < now() - interval '1 minute'
                  AND idempotency_keys.request_sha256 = excluded.request_sha256
            RETURNING 1
            """)
        if !inserted.isEmpty { return .claimed }
        let row = try await connection.query(
            """
            SELECT request_sha256, status, headers::text AS headers, body FROM idempotency_keys
            WHERE tenant_id = \(tenantID) AND credential_id = \(credential) AND person_id = \(person) AND key = \(key)
            """
        ).single()
        guard try row.decode(Data.self, column: "request_sha256") == requestHash else { return .otherRequest }
        guard let status: Int = try row.decode(column: "status") else { return .inProgress }
        let headersText: String = try row.decode(String?.self, column: "headers") ?? "{}"
        let headers = (try? JSONDecoder().decode([String: String].self, from: Data(headersText.utf8))) ?? [:]
        let body: Data = try row.decode(Data?.self, column: "body") ?? Data()
        return .answered(status: status, headers: headers, body: Array(body))
    }

    /// Keeps the answer to a claimed key.
    public func completeIdempotencyKey(
        _ key: String, credential: UUID, person: UUID?, status: Int, headers: [String: String], body: [UInt8]
    ) async throws {
        let headersText = String(decoding: try JSONEncoder().encode(headers), as: UTF8.self)
        try await connection.query(
            """
            UPDATE idempotency_keys SET status = \(status), headers = \(headersText)::jsonb, body = \(Data(body))
            WHERE tenant_id = \(tenantID) AND credential_id = \(credential) AND person_id = \(person ?? Self.noPerson) AND key = \(key)
            """)
    }

    /// Lets a key go (the request failed; the client may retry it, even with another body).
    public func releaseIdempotencyKey(_ key: String, credential: UUID, person: UUID?) async throws {
        try await connection.query(
            """
            DELETE FROM idempotency_keys
            WHERE tenant_id = \(tenantID) AND credential_id = \(credential) AND person_id = \(person ?? Self.noPerson) AND key = \(key)
              AND status IS NULL
            """)
    }

    /// The acting person's column for a tenant key acting as itself.
    private static let noPerson = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}
