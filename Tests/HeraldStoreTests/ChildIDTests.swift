import Foundation
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// `herald_child_id` makes fan-out idempotent: a notification's id comes from its event and
/// recipient, a delivery's from its notification and device. Rewritten for speed in
/// `0023_child_id_one_md5.sql`, it must give every id 0018's version gave, or a part written
/// again after an upgrade would write its rows twice.
@Suite struct ChildIDTests {
    @Test func theOneHashVersionMakesTheIdsOf0018() async throws {
        try await TestDatabase.withStore { store, _ in
            let mismatches = try await store.pool.query(
                """
                WITH input AS (
                    SELECT gen_random_uuid() AS parent, gen_random_uuid()::text || gen_random_uuid()::text AS key
                    FROM generate_series(1, 20000)
                    UNION ALL
                    SELECT herald_uuid_floor(now()), k FROM unnest(ARRAY['', 'é', repeat('x', 1000), 'broken-1']) AS k
                )
                SELECT count(*)::int FROM input
                WHERE herald_child_id(parent, key)
                      <> (left(replace(parent::text, '-', ''), 12) || '7' || substr(md5(key), 1, 3) || '8' || substr(md5(key), 4, 15))::uuid
                """
            ).single().decode(Int.self)
            #expect(mismatches == 0)
            // Its time is the parent's, and it is a version 7, variant 1 UUID.
            let (sameTime, version, variant) = try await store.pool.query(
                """
                SELECT herald_uuid_time(c) = herald_uuid_time(p), substr(c::text, 15, 1), substr(c::text, 20, 1)
                FROM (SELECT p, herald_child_id(p, 'device') AS c FROM (SELECT herald_uuid_floor(now()) AS p) x) y
                """
            ).single().decode((Bool, String, String).self)
            #expect(sameTime)
            #expect(version == "7")
            #expect(variant == "8")
        }
    }
}
