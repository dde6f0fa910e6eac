-- Every departure tells the live servers at once (docs/live-protocol.md#who-is-told): the
-- triggers of 0046 that number a tenant's departures also NOTIFY `herald_membership` with the
-- tenant's id, in the departing transaction, so a presence subscription whose only shared
-- context was a conversation ends when its person leaves it, not at the next minute's check,
-- as it already did for a team. A hint only: PostgreSQL delivers it at the commit (once a
-- transaction for the same tenant), and the minute's check still covers a server that was not
-- listening. Only the pairs of someone who left are checked, so a leave costs what it touches.

CREATE OR REPLACE FUNCTION herald_presence_departed_rows() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    tenant uuid;
BEGIN
    WITH counted AS (
        INSERT INTO presence_departures AS d (tenant_id, departures)
        SELECT DISTINCT tenant_id, 1 FROM departed
        ON CONFLICT (tenant_id) DO UPDATE SET departures = d.departures + 1
        RETURNING d.tenant_id, d.departures
    )
    INSERT INTO presence_departed AS p (tenant_id, person_id, departure)
    SELECT DISTINCT x.tenant_id, x.person_id, c.departures FROM departed x JOIN counted c ON c.tenant_id = x.tenant_id
    ON CONFLICT (tenant_id, person_id) DO UPDATE SET departure = excluded.departure;
    FOR tenant IN SELECT DISTINCT tenant_id FROM departed LOOP
        PERFORM pg_notify('herald_membership', tenant::text);
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION herald_presence_departed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    numbered bigint;
BEGIN
    INSERT INTO presence_departures AS d (tenant_id, departures) VALUES (NEW.tenant_id, 1)
    ON CONFLICT (tenant_id) DO UPDATE SET departures = d.departures + 1
    RETURNING d.departures INTO numbered;
    INSERT INTO presence_departed AS p (tenant_id, person_id, departure) VALUES (NEW.tenant_id, NEW.person_id, numbered)
    ON CONFLICT (tenant_id, person_id) DO UPDATE SET departure = excluded.departure;
    PERFORM pg_notify('herald_membership', NEW.tenant_id::text);
    RETURN NULL;
END
$$;
