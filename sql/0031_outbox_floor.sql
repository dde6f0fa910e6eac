-- The outbox's pending events by seq alone, and where the live window begins found from a
-- floor.
--
-- Fan-out claims the oldest pending events across tenants. Each event is updated in place
-- when it is fanned out, and its pending version stays in `outbox_pending` until vacuum
-- removes it: while another session holds a snapshot (a report, pg_dump, a forgotten psql
-- session), vacuum cannot, and every claim walked every event fanned out since the snapshot
-- began (80 ms a claim after 7 minutes at 80 events a second). The dispatcher now keeps a
-- floor below which no event is pending or can still commit (`QueueFloor`), and this index,
-- ordered as the claim reads, lets a claim start there.
CREATE INDEX outbox_pending_seq ON outbox (seq) WHERE fanned_out_at IS NULL;

-- herald_live_floor() found the oldest pending event by id over every entry of the index;
-- it now starts at the caller's floor (0: all) and reads in seq order, which is the order of
-- the events' ids to within the transactions in flight (the window is whole days).
DROP FUNCTION herald_live_floor();
CREATE FUNCTION herald_live_floor(from_seq bigint DEFAULT 0) RETURNS uuid
LANGUAGE plpgsql STABLE AS $$
DECLARE
    day date;
    today date := (now() AT TIME ZONE 'UTC')::date;
    oldest date;
BEGIN
    SELECT least(today, (SELECT (herald_uuid_time(id) AT TIME ZONE 'UTC')::date FROM outbox
                         WHERE fanned_out_at IS NULL AND seq >= from_seq ORDER BY seq LIMIT 1)) INTO oldest;
    FOR day IN SELECT p.day FROM herald_history_partitions() p WHERE p.day < oldest ORDER BY p.day LOOP
        IF herald_history_partition_live(day) THEN
            RETURN herald_uuid_floor(day::timestamp AT TIME ZONE 'UTC');
        END IF;
    END LOOP;
    RETURN herald_uuid_floor(oldest::timestamp AT TIME ZONE 'UTC');
END
$$;
REVOKE ALL ON FUNCTION herald_live_floor(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION herald_live_floor(bigint) TO herald_dispatcher, herald_app;
