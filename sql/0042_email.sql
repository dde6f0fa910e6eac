-- Email (docs/notifications.md#email): a person's address is a device of provider, platform
-- and kind `email`, kept by Herald from people.email (never registered by an app); it serves
-- both apps (its `app` column says nothing). Its deliveries, attempts, outcomes, history and `why` are every other device's; an
-- address the relay refused permanently three times is deactivated like a dead token.
DO $$
DECLARE
    target record;
BEGIN
    FOR target IN
        SELECT c.conrelid::regclass AS tab, c.conname, pg_get_constraintdef(c.oid) AS def
        FROM pg_constraint c
        WHERE c.contype = 'c' AND c.conrelid IN ('devices'::regclass, 'deliveries'::regclass, 'provider_pauses'::regclass)
          AND c.coninhcount = 0
          AND pg_get_constraintdef(c.oid) IN (
              'CHECK ((provider = ANY (ARRAY[''fcm''::text, ''apns''::text, ''webpush''::text])))',
              'CHECK ((platform = ANY (ARRAY[''ios''::text, ''android''::text, ''web''::text])))',
              'CHECK ((kind = ANY (ARRAY[''alert''::text, ''liveactivity''::text, ''liveactivity_update''::text])))')
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', target.tab, target.conname);
        IF target.def LIKE '%provider%' THEN
            EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (provider IN (''fcm'', ''apns'', ''webpush'', ''email''))', target.tab, target.conname);
        ELSIF target.def LIKE '%platform%' THEN
            EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (platform IN (''ios'', ''android'', ''web'', ''email''))', target.tab, target.conname);
        ELSE
            EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (kind IN (''alert'', ''liveactivity'', ''liveactivity_update'', ''email''))', target.tab, target.conname);
        END IF;
    END LOOP;
END
$$;

ALTER TABLE devices DROP CONSTRAINT devices_live_activity_is_apns;
ALTER TABLE devices ADD CONSTRAINT devices_live_activity_is_apns
    CHECK (kind IN ('alert', 'email') OR (provider = 'apns' AND platform = 'ios' AND address = 'token'));
ALTER TABLE devices ADD CONSTRAINT devices_email_is_email
    CHECK ((provider = 'email') = (kind = 'email') AND (provider = 'email') = (platform = 'email'));
-- Permanent refusals of the address in a row (a 5xx from the relay); the third deactivates it.
ALTER TABLE devices ADD COLUMN refusals integer NOT NULL DEFAULT 0;

-- Each person's address: written with the person, replaced when it changes.
CREATE FUNCTION herald_keep_email_devices() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF NEW.email = OLD.email THEN
            RETURN NEW;
        END IF;
        UPDATE devices SET removed_at = now(), updated_at = now()
        WHERE tenant_id = NEW.tenant_id AND person_id = NEW.id AND kind = 'email' AND removed_at IS NULL;
    END IF;
    INSERT INTO devices (tenant_id, id, person_id, token, address, app, platform, provider, kind)
    VALUES (NEW.tenant_id, herald_child_id(NEW.id, NEW.email), NEW.id, NEW.email, 'token', 'member', 'email', 'email', 'email')
    ON CONFLICT (tenant_id, provider, address, token) DO UPDATE SET removed_at = NULL, updated_at = now()
        WHERE devices.person_id = EXCLUDED.person_id;
    RETURN NEW;
END
$$;
CREATE TRIGGER people_email_devices AFTER INSERT OR UPDATE OF email ON people
    FOR EACH ROW EXECUTE FUNCTION herald_keep_email_devices();

-- The addresses of the people there are, tenant by tenant (row-level security binds even
-- the owner: each tenant's rows in its own scope).
DO $$
DECLARE
    tenant uuid;
BEGIN
    FOR tenant IN SELECT id FROM tenants LOOP
        PERFORM set_config('herald.tenant_id', tenant::text, true);
        INSERT INTO devices (tenant_id, id, person_id, token, address, app, platform, provider, kind)
        SELECT p.tenant_id, herald_child_id(p.id, p.email), p.id, p.email, 'token', 'member', 'email', 'email', 'email'
        FROM people p WHERE p.tenant_id = tenant
        ON CONFLICT DO NOTHING;
    END LOOP;
    PERFORM set_config('herald.tenant_id', '', true);
END
$$;

GRANT UPDATE (refusals) ON devices TO herald_dispatcher;

-- Which channel a person wants an event on, per app (docs/notifications.md#email): `push`
-- (no row: pushed, and emailed when no device can be), `push_only` (never emailed: what the
-- one-click unsubscribe sets), `both`, or `email` (emailed instead of pushed).
CREATE TABLE notification_channels (
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE RESTRICT,
    person_id uuid NOT NULL,
    event text NOT NULL,
    app text NOT NULL CHECK (app IN ('member', 'manager')),
    channel text NOT NULL CHECK (channel IN ('push', 'push_only', 'both', 'email')),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, person_id, event, app),
    FOREIGN KEY (tenant_id, person_id) REFERENCES people (tenant_id, id) ON DELETE RESTRICT
);
ALTER TABLE notification_channels ENABLE ROW LEVEL SECURITY;
ALTER TABLE notification_channels FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON notification_channels
    USING (tenant_id = herald_current_tenant()) WITH CHECK (tenant_id = herald_current_tenant());
GRANT SELECT, INSERT, UPDATE, DELETE ON notification_channels TO herald_app;

-- Where a person's digest goes: pushed (emailed when no device can be), or emailed instead.
ALTER TABLE people ADD COLUMN digest_channel text NOT NULL DEFAULT 'push' CHECK (digest_channel IN ('push', 'email'));

-- The key unsubscribe links are signed with (HMAC-SHA256): made here, read by workers (which
-- sign) and `herald serve` (which checks). 244 random bits (two version-4 UUIDs).
CREATE TABLE email_link_keys (
    id integer PRIMARY KEY CHECK (id = 1),
    secret text NOT NULL
);
INSERT INTO email_link_keys VALUES (1, replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));
GRANT SELECT ON email_link_keys TO herald_dispatcher, herald_app;
