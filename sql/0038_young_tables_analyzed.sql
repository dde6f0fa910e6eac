-- Tables analyzed as soon as they have changed more than they held when last analyzed (a
-- new database, a table a clean-up emptied), not a minute later.
--
-- The dispatcher's connections keep plans made once (fan-out's statements, the claims). A plan
-- made while a table is empty by its statistics cannot tell its indexes apart: on a new
-- database, the lookup of an event by its id was planned on the outbox's (tenant, seq) index,
-- which read every event of the tenant for every recipient, and pickup at 200 events a second
-- grew from 2 to 30 ms over half a minute (docs/operating/database.md, "Statistics of young tables").
-- Autovacuum analyzes such a table within its next minute; this function, which workers call
-- every few seconds, does it at once, and the plans made before are made again from the new
-- statistics. A table that held rows when last analyzed is left to autovacuum: it takes
-- `min_changes` and as many changes as the table held then.
CREATE FUNCTION herald_analyze_young_tables(min_changes bigint) RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp SET lock_timeout = '1s' AS $$
DECLARE
    young record;
BEGIN
    -- One worker at a time; the others find nothing left to do at their next call.
    IF NOT pg_try_advisory_xact_lock(hashtext('herald_analyze_young_tables')) THEN
        RETURN;
    END IF;
    FOR young IN
        SELECT s.relid::regclass AS rel, s.relname::text AS name
        FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
        WHERE s.schemaname = 'public' AND s.n_mod_since_analyze >= greatest(min_changes, c.reltuples)
        ORDER BY s.relname
    LOOP
        BEGIN
            EXECUTE format('ANALYZE %s', young.rel);
            RETURN NEXT young.name;
        EXCEPTION WHEN lock_not_available THEN
            -- Autovacuum (or a manual ANALYZE) has it: that will do.
            NULL;
        END;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION herald_analyze_young_tables(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION herald_analyze_young_tables(bigint) TO herald_dispatcher;
