-- Presence subscriptions are checked again only where someone could have lost sight of someone
-- (docs/live-protocol.md#who-is-told): one may see another's presence while they share a team
-- or a conversation, so only a person leaving a team or a conversation ends it, and only for
-- the pairs they are in. Each tenant numbers its departures here, in the transaction that
-- makes them, and keeps who left by the number of their latest departure: a `herald serve`
-- reads both every minute and checks again, of each subscription found visible at an earlier
-- number, only the people in it who left since (all of it if its subscriber did). Checking
-- every pair every minute cost PostgreSQL 5-6 s a minute at 10,000 sockets of 50
-- subscriptions each (docs/operating/scaling.md).
--
-- The count's row lock orders a tenant's departures: a reader that sees number n sees every
-- departure up to n, with who left.
CREATE TABLE presence_departures (
    tenant_id uuid PRIMARY KEY,
    departures bigint NOT NULL DEFAULT 0
);
-- One row a person who ever left (no foreign key: a tenant's deletion removes both tables last).
CREATE TABLE presence_departed (
    tenant_id uuid NOT NULL,
    person_id uuid NOT NULL,
    departure bigint NOT NULL,
    PRIMARY KEY (tenant_id, person_id)
);
-- Who left after a number.
CREATE INDEX presence_departed_after ON presence_departed (tenant_id, departure);

DO $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['presence_departures', 'presence_departed'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', name);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', name);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON %I USING (tenant_id = herald_current_tenant()) '
            'WITH CHECK (tenant_id = herald_current_tenant())', name);
        -- The owner's own statements (fixtures, maintenance) count too.
        EXECUTE format('CREATE POLICY maintenance ON %I TO CURRENT_USER USING (true) WITH CHECK (true)', name);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO herald_app', name);
    END LOOP;
END
$$;

-- Rows removed from team_members or conversation_participants by one statement (a transition
-- table: a tenant's deletion removes thousands at once): one departure a tenant.
CREATE FUNCTION herald_presence_departed_rows() RETURNS trigger
LANGUAGE plpgsql AS $$
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
    RETURN NULL;
END
$$;

-- One participant leaving a conversation (its row stays, with `left_at`).
CREATE FUNCTION herald_presence_departed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    numbered bigint;
BEGIN
    INSERT INTO presence_departures AS d (tenant_id, departures) VALUES (NEW.tenant_id, 1)
    ON CONFLICT (tenant_id) DO UPDATE SET departures = d.departures + 1
    RETURNING d.departures INTO numbered;
    INSERT INTO presence_departed AS p (tenant_id, person_id, departure) VALUES (NEW.tenant_id, NEW.person_id, numbered)
    ON CONFLICT (tenant_id, person_id) DO UPDATE SET departure = excluded.departure;
    RETURN NULL;
END
$$;

CREATE TRIGGER team_members_departed AFTER DELETE ON team_members
    REFERENCING OLD TABLE AS departed FOR EACH STATEMENT EXECUTE FUNCTION herald_presence_departed_rows();
CREATE TRIGGER conversation_participants_departed AFTER DELETE ON conversation_participants
    REFERENCING OLD TABLE AS departed FOR EACH STATEMENT EXECUTE FUNCTION herald_presence_departed_rows();
-- Only a leave: the receipts' updates of the same rows (many a second) never set `left_at`.
CREATE TRIGGER conversation_participants_left AFTER UPDATE OF left_at ON conversation_participants FOR EACH ROW
    WHEN (OLD.left_at IS NULL AND NEW.left_at IS NOT NULL)
    EXECUTE FUNCTION herald_presence_departed();
