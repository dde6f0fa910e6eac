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

-- herald_live_floor() found the oldest pending event by id among every entry of the index;
-- it now looks only at those from the caller's floor on (0: all), still by id (an event's id
-- carries its time, which may be earlier than its seq says).
DROP FUNCTION herald_live_floor();
CREATE FUNCTION herald_live_floor(from_seq bigint DEFAULT 0) RETURNS uuid
LANGUAGE plpgsql STABLE AS $$
DECLARE
    day date;
    today date := (now() AT TIME ZONE 'UTC')::date;
    oldest date;
BEGIN
    SELECT least(today, (SELECT (herald_uuid_time(id) AT TIME ZONE 'UTC')::date FROM outbox
                         WHERE fanned_out_at IS NULL AND seq >= from_seq ORDER BY id LIMIT 1)) INTO oldest;
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

-- The floors learn the highest number handed out from the identity sequences (max() over the
-- outbox would read its whole history; over live_pending, every row a held snapshot keeps).
GRANT SELECT ON SEQUENCE outbox_seq_seq TO herald_dispatcher;
GRANT SELECT ON SEQUENCE live_pending_id_seq TO herald_live;
