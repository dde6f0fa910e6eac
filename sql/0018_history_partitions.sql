-- History by week: notifications, deliveries and delivery attempts become tables
-- partitioned by range of id, one partition per UTC week (Monday to Sunday) of each, so that
-- history past its retention is dropped a week at a time, never deleted row by row. (Weeks,
-- not days: every statement that cannot name its days plans each partition, and the default
-- 90 days kept 97 daily partitions per table, which halved the rate of transitions.)
--
-- Ids are UUIDv7: their first 48 bits are the Unix time in milliseconds. Every row of one
-- notification carries the notification's time (and the notification its event's), so a
-- notification, its deliveries and their attempts always share one week and are dropped
-- together:
--   notification id = event id's time      + a digest of (event, recipient)
--   delivery id     = notification's time  + a digest of (notification, device)
--   attempt id      = delivery's time      + random bits
-- The digests make fan-out idempotent through the primary keys (a unique constraint on a
-- partitioned table must include the partition key, so the old (event, recipient) and
-- (notification, device) constraints cannot stay).
--
-- The three tables keep no foreign keys: a partition referenced by one cannot be dropped
-- without a scan of the referencing table, and a key from a partitioned table is checked
-- in every partition for each row a tenant's deletion removes (seconds per thousand
-- devices with 90 days of partitions). They reference each other, outbox, people and
-- devices by (tenant_id, id) all the same: fan-out writes a notification and its
-- deliveries in one statement from rows it has just read, an attempt is recorded only for
-- a delivery that exists, and none of those rows is ever deleted but with its tenant.
--
-- An existing database's rows move into the new tables with their ids rewritten to that
-- layout (the random part of an old id is kept); history keeps every row.

-- The smallest id of the millisecond `at`.
CREATE FUNCTION herald_uuid_floor(at timestamptz) RETURNS uuid
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (lpad(to_hex(floor(extract(epoch FROM at) * 1000)::bigint), 12, '0') || repeat('0', 20))::uuid
$$;

-- The time an id's first 48 bits give.
CREATE FUNCTION herald_uuid_time(id uuid) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_timestamp(('x' || left(replace(id::text, '-', ''), 12))::bit(48)::bigint / 1000.0)
$$;

-- The smallest and the largest id of the millisecond `id` carries.
CREATE FUNCTION herald_uuid_ms_first(id uuid) RETURNS uuid
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (left(replace(id::text, '-', ''), 12) || repeat('0', 20))::uuid
$$;
CREATE FUNCTION herald_uuid_ms_last(id uuid) RETURNS uuid
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (left(replace(id::text, '-', ''), 12) || repeat('f', 20))::uuid
$$;

-- An id with `parent`'s time and 74 bits of md5(`key`), in the UUIDv7 layout.
CREATE FUNCTION herald_child_id(parent uuid, key text) RETURNS uuid
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (left(replace(parent::text, '-', ''), 12) || '7' || substr(md5(key), 1, 3) || '8' || substr(md5(key), 4, 15))::uuid
$$;

DROP VIEW notification_outcomes;

CREATE SCHEMA herald_unpartitioned;
ALTER TABLE delivery_attempts SET SCHEMA herald_unpartitioned;
ALTER TABLE deliveries SET SCHEMA herald_unpartitioned;
ALTER TABLE notifications SET SCHEMA herald_unpartitioned;

CREATE TABLE notifications (
    tenant_id uuid NOT NULL,
    id uuid NOT NULL,
    event_id uuid NOT NULL,
    kind text NOT NULL,
    recipient_id uuid NOT NULL,
    app text NOT NULL CHECK (app IN ('member', 'manager')),
    team_id uuid,
    activity_id uuid,
    conversation_id uuid,
    title text NOT NULL,
    body text NOT NULL,
    data jsonb NOT NULL,
    badge integer NOT NULL,
    sound boolean NOT NULL,
    thread_id text NOT NULL,
    image_url text,
    status text NOT NULL CHECK (status IN ('queued', 'no_device', 'suppressed', 'cancelled')),
    reason text,
    event_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    decision text CHECK (decision IN ('send', 'muted', 'preference_off', 'viewing', 'quiet_hours', 'no_device', 'superseded')),
    deferred_until timestamptz,
    PRIMARY KEY (tenant_id, id)
) PARTITION BY RANGE (id);
CREATE INDEX notifications_created ON notifications (tenant_id, created_at);
CREATE INDEX notifications_recipient ON notifications (tenant_id, recipient_id, created_at);
CREATE INDEX notifications_activity ON notifications (tenant_id, activity_id) WHERE activity_id IS NOT NULL;
CREATE INDEX notifications_event ON notifications (tenant_id, event_id);
CREATE INDEX notifications_deferred ON notifications (tenant_id, recipient_id, conversation_id) WHERE decision = 'quiet_hours';

CREATE TABLE deliveries (
    tenant_id uuid NOT NULL,
    id uuid NOT NULL,
    notification_id uuid NOT NULL,
    device_id uuid NOT NULL,
    provider text NOT NULL CHECK (provider IN ('fcm', 'apns')),
    status text NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'sending', 'sent', 'dead_token', 'failed', 'expired', 'cancelled')),
    attempts integer NOT NULL DEFAULT 0,
    due_at timestamptz NOT NULL DEFAULT now(),
    deadline_at timestamptz NOT NULL,
    first_attempt_at timestamptz,
    lease_owner text,
    lease_expires_at timestamptz,
    http_status integer,
    message_id text,
    last_error text,
    sent_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CHECK ((status = 'sending') = (lease_owner IS NOT NULL))
) PARTITION BY RANGE (id);
CREATE INDEX deliveries_notification ON deliveries (tenant_id, notification_id);
CREATE INDEX deliveries_device ON deliveries (tenant_id, device_id);
CREATE INDEX deliveries_due ON deliveries (tenant_id, due_at) WHERE status = 'queued';
CREATE INDEX deliveries_leased ON deliveries (lease_expires_at) WHERE status = 'sending';

CREATE TABLE delivery_attempts (
    tenant_id uuid NOT NULL,
    id uuid NOT NULL,
    delivery_id uuid NOT NULL,
    attempt integer NOT NULL,
    worker text NOT NULL,
    started_at timestamptz NOT NULL,
    finished_at timestamptz NOT NULL,
    outcome text NOT NULL
        CHECK (outcome IN ('delivered', 'retry', 'dead_token', 'bad_request', 'configuration_error', 'cancelled')),
    http_status integer,
    provider_error text,
    message_id text,
    next_attempt_at timestamptz,
    counted boolean NOT NULL,
    PRIMARY KEY (tenant_id, id)
) PARTITION BY RANGE (id);
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (tenant_id, delivery_id, attempt);

-- The week partitions of the three tables, each named by its Monday:
-- `herald_history_partitions` lists them (`day` is the Monday),
-- `herald_create_history_partitions` makes the missing ones for the weeks of a range of days,
-- and `herald_drop_history_partition` drops one week of all three. They run as the owner
-- (security definer) so workers may call them; a week with a delivery still queued or being
-- sent is never dropped.
CREATE FUNCTION herald_history_partitions() RETURNS TABLE (day date, tables int, notifications bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT to_date(right(c.relname, 8), 'YYYYMMDD') AS day, count(*)::int,
           sum(CASE WHEN p.relname = 'notifications' THEN greatest(c.reltuples, 0)::bigint ELSE 0 END)::bigint
    FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid
    JOIN pg_class p ON p.oid = i.inhparent
    WHERE p.relname IN ('notifications', 'deliveries', 'delivery_attempts')
      AND p.relnamespace = 'public'::regnamespace
      AND c.relname ~ '_\d{8}$'
    GROUP BY 1 ORDER BY 1
$$;

-- Both wait at most 2 s for their locks (a new or dropped partition locks its parent for a
-- moment); the worker that timed out tries again at its next upkeep.
CREATE FUNCTION herald_create_history_partitions(first date, last date) RETURNS int
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp SET lock_timeout = '2s' AS $$
DECLARE
    day date;
    name text;
    created int := 0;
BEGIN
    IF last - first > 400 THEN
        RAISE EXCEPTION 'at most 400 days of partitions at once';
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('herald_history_partitions'));
    FOR day IN SELECT generate_series(date_trunc('week', first), date_trunc('week', last), interval '7 days')::date LOOP
        FOREACH name IN ARRAY ARRAY['notifications', 'deliveries', 'delivery_attempts'] LOOP
            IF to_regclass(format('public.%I', name || '_' || to_char(day, 'YYYYMMDD'))) IS NULL THEN
                EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                               name || '_' || to_char(day, 'YYYYMMDD'), name,
                               herald_uuid_floor(day::timestamp AT TIME ZONE 'UTC'),
                               herald_uuid_floor((day + 7)::timestamp AT TIME ZONE 'UTC'));
                created := created + 1;
            END IF;
        END LOOP;
    END LOOP;
    RETURN created;
END
$$;

-- Whether the week that starts on `day` has a delivery still queued or being sent (read in
-- its partition, as the owner: whoever asks, a prune, its dry run and the live floor agree).
CREATE FUNCTION herald_history_partition_live(day date) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    live boolean := false;
BEGIN
    IF to_regclass('public.deliveries_' || to_char(day, 'YYYYMMDD')) IS NOT NULL THEN
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE status IN (''queued'', ''sending''))', 'deliveries_' || to_char(day, 'YYYYMMDD'))
        INTO live;
    END IF;
    RETURN live;
END
$$;

-- Drops the week of history that starts on `day`. Returns the number of notifications it
-- held (the planner's estimate: counting would read the week), or NULL (and drops nothing)
-- when one of its deliveries is still queued or being sent.
CREATE FUNCTION herald_drop_history_partition(day date) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp SET lock_timeout = '2s' AS $$
DECLARE
    suffix text := to_char(day, 'YYYYMMDD');
    held bigint := 0;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('herald_history_partitions'));
    IF herald_history_partition_live(day) THEN
        RETURN NULL;
    END IF;
    IF to_regclass('public.notifications_' || suffix) IS NOT NULL THEN
        SELECT greatest(reltuples, 0)::bigint INTO held FROM pg_class WHERE oid = to_regclass('public.notifications_' || suffix);
    END IF;
    EXECUTE format('DROP TABLE IF EXISTS %I, %I, %I',
                   'delivery_attempts_' || suffix, 'deliveries_' || suffix, 'notifications_' || suffix);
    RETURN held;
END
$$;

-- The oldest id a delivery still to send (queued, or leased to a worker) may have: the start
-- of the oldest week with one (or the day of the oldest event not fanned out yet), and never
-- after today.
-- Workers read it every few seconds and look for work only from there on, so a claim
-- plans and reads the partitions of this week or two instead of every week kept. (No
-- delivery older than it becomes due again: new deliveries take their event's time, and an
-- event not fanned out holds the floor at its day until it is.) It runs as its caller, the
-- dispatcher, whose policies see every tenant's outbox.
CREATE FUNCTION herald_live_floor() RETURNS uuid
LANGUAGE plpgsql STABLE AS $$
DECLARE
    day date;
    today date := (now() AT TIME ZONE 'UTC')::date;
    oldest date;
BEGIN
    SELECT least(today, (SELECT (herald_uuid_time(id) AT TIME ZONE 'UTC')::date FROM outbox
                         WHERE fanned_out_at IS NULL ORDER BY id LIMIT 1)) INTO oldest;
    FOR day IN SELECT p.day FROM herald_history_partitions() p WHERE p.day < oldest ORDER BY p.day LOOP
        IF herald_history_partition_live(day) THEN
            RETURN herald_uuid_floor(day::timestamp AT TIME ZONE 'UTC');
        END IF;
    END LOOP;
    RETURN herald_uuid_floor(oldest::timestamp AT TIME ZONE 'UTC');
END
$$;

REVOKE ALL ON FUNCTION herald_history_partitions(), herald_create_history_partitions(date, date),
    herald_history_partition_live(date), herald_drop_history_partition(date), herald_live_floor() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION herald_history_partitions(), herald_create_history_partitions(date, date),
    herald_history_partition_live(date), herald_drop_history_partition(date), herald_live_floor() TO herald_dispatcher, herald_app;

-- The rows already there, with their ids in the new layout. (A notification's id is made
-- from its event and recipient as fan-out makes it now; old ids are kept in no table.)
CREATE TEMPORARY TABLE moved_notifications ON COMMIT DROP AS
SELECT n.id AS old_id, herald_child_id(n.event_id, n.event_id::text || n.recipient_id::text) AS id
FROM herald_unpartitioned.notifications n;
CREATE TEMPORARY TABLE moved_deliveries ON COMMIT DROP AS
SELECT d.id AS old_id, herald_child_id(m.id, m.id::text || d.device_id::text) AS id
FROM herald_unpartitioned.deliveries d JOIN moved_notifications m ON m.old_id = d.notification_id;
CREATE INDEX ON moved_notifications (old_id);
CREATE INDEX ON moved_deliveries (old_id);

SELECT herald_create_history_partitions(
    least((SELECT (min(herald_uuid_time(id)) AT TIME ZONE 'UTC')::date FROM moved_notifications), (now() AT TIME ZONE 'UTC')::date - 1),
    (now() AT TIME ZONE 'UTC')::date + 7);

INSERT INTO notifications
SELECT n.tenant_id, m.id, n.event_id, n.kind, n.recipient_id, n.app, n.team_id, n.activity_id, n.conversation_id, n.title,
       n.body, n.data, n.badge, n.sound, n.thread_id, n.image_url, n.status, n.reason, n.event_at, n.created_at, n.decision,
       n.deferred_until
FROM herald_unpartitioned.notifications n JOIN moved_notifications m ON m.old_id = n.id;

INSERT INTO deliveries
SELECT d.tenant_id, m.id, n.id, d.device_id, d.provider, d.status, d.attempts, d.due_at, d.deadline_at, d.first_attempt_at,
       d.lease_owner, d.lease_expires_at, d.http_status, d.message_id, d.last_error, d.sent_at, d.created_at, d.updated_at
FROM herald_unpartitioned.deliveries d
JOIN moved_deliveries m ON m.old_id = d.id
JOIN moved_notifications n ON n.old_id = d.notification_id;

INSERT INTO delivery_attempts
SELECT a.tenant_id, herald_child_id(m.id, a.id::text), m.id, a.attempt, a.worker, a.started_at, a.finished_at, a.outcome,
       a.http_status, a.provider_error, a.message_id, a.next_attempt_at, a.counted
FROM herald_unpartitioned.delivery_attempts a JOIN moved_deliveries m ON m.old_id = a.delivery_id;

DO $$
BEGIN
    IF (SELECT count(*) FROM notifications) <> (SELECT count(*) FROM herald_unpartitioned.notifications)
       OR (SELECT count(*) FROM deliveries) <> (SELECT count(*) FROM herald_unpartitioned.deliveries)
       OR (SELECT count(*) FROM delivery_attempts) <> (SELECT count(*) FROM herald_unpartitioned.delivery_attempts) THEN
        RAISE EXCEPTION 'history did not move whole';
    END IF;
END
$$;

DROP SCHEMA herald_unpartitioned CASCADE;

DO $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['notifications', 'deliveries', 'delivery_attempts'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', name);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', name);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON %I USING (tenant_id = herald_current_tenant()) '
            'WITH CHECK (tenant_id = herald_current_tenant())', name);
        EXECUTE format('CREATE POLICY dispatcher ON %I TO herald_dispatcher USING (true) WITH CHECK (true)', name);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO herald_app', name);
    END LOOP;
END
$$;
GRANT SELECT ON notifications TO herald_dispatcher;
GRANT SELECT, UPDATE ON deliveries TO herald_dispatcher;
GRANT SELECT, INSERT ON delivery_attempts TO herald_dispatcher;

-- As in 0017; a notification's deliveries share its time, so the lookup touches one week.
CREATE VIEW notification_outcomes WITH (security_invoker = true) AS
SELECT n.tenant_id, n.id, n.event_id, n.kind, n.recipient_id, n.app, n.team_id, n.activity_id, n.conversation_id,
       n.title, n.body, n.event_at, n.created_at,
       CASE WHEN n.status <> 'queued' THEN n.status
            WHEN a.sent > 0 THEN 'sent'
            WHEN a.pending > 0 THEN 'pending'
            WHEN a.expired > 0 THEN 'expired'
            WHEN a.dead = a.total THEN 'dead_token'
            WHEN a.cancelled = a.total THEN 'cancelled'
            ELSE 'failed' END AS status,
       coalesce(n.reason, a.problem) AS reason, a.total AS devices, a.sent AS devices_sent, a.sent_at,
       n.decision, n.deferred_until
FROM notifications n
CROSS JOIN LATERAL (
    SELECT count(*)::int AS total,
           count(*) FILTER (WHERE d.status = 'sent')::int AS sent,
           count(*) FILTER (WHERE d.status IN ('queued', 'sending'))::int AS pending,
           count(*) FILTER (WHERE d.status = 'expired')::int AS expired,
           count(*) FILTER (WHERE d.status = 'dead_token')::int AS dead,
           count(*) FILTER (WHERE d.status = 'cancelled')::int AS cancelled,
           min(d.sent_at) AS sent_at,
           string_agg(DISTINCT d.status || ': ' || d.last_error, '; ')
               FILTER (WHERE d.status <> 'sent' AND d.last_error IS NOT NULL) AS problem
    FROM deliveries d
    WHERE d.tenant_id = n.tenant_id AND d.notification_id = n.id
      AND d.id BETWEEN herald_uuid_ms_first(n.id) AND herald_uuid_ms_last(n.id)
) a;
GRANT SELECT ON notification_outcomes TO herald_app, herald_dispatcher;
