-- The workflow: people, teams, devices, activities, their transitions, and the outbox.
-- Every tenant table is keyed (tenant_id, id) and guarded by row-level security: the
-- application works as the role herald_app, which sees only the rows of the tenant named
-- in the transaction-local setting herald.tenant_id.

-- The role the application switches to (SET LOCAL ROLE) for tenant work. It owns nothing,
-- so FORCE ROW LEVEL SECURITY binds it. Roles are cluster-wide: another database on the
-- same server may have created it already, perhaps at this very moment.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'herald_app') THEN
        CREATE ROLE herald_app NOLOGIN NOSUPERUSER NOBYPASSRLS;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END
$$;

DO $$
BEGIN
    IF NOT pg_has_role(current_user, 'herald_app', 'MEMBER') THEN
        EXECUTE format('GRANT herald_app TO %I', current_user);
    END IF;
END
$$;

-- The tenant the current transaction works for, or NULL.
CREATE FUNCTION herald_current_tenant() RETURNS uuid
    LANGUAGE sql STABLE
    AS $$ SELECT NULLIF(current_setting('herald.tenant_id', true), '')::uuid $$;

-- Tenants are the directory every command starts from (a slug is looked up before any
-- tenant is chosen), so the table itself has no policy; the application reads it by slug.
GRANT SELECT, INSERT ON tenants TO herald_app;

CREATE TABLE people (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    id uuid NOT NULL,
    email text NOT NULL CHECK (email = lower(email)),
    display_name text NOT NULL CHECK (length(display_name) BETWEEN 1 AND 200),
    locale text NOT NULL DEFAULT 'en',
    time_zone text NOT NULL DEFAULT 'UTC',
    is_admin boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT people_email_unique UNIQUE (tenant_id, email)
);

CREATE TABLE teams (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    id uuid NOT NULL,
    slug text NOT NULL CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT teams_slug_unique UNIQUE (tenant_id, slug)
);

CREATE TABLE team_members (
    tenant_id uuid NOT NULL,
    team_id uuid NOT NULL,
    person_id uuid NOT NULL,
    role text NOT NULL CHECK (role IN ('manager', 'member')),
    added_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, team_id, person_id),
    FOREIGN KEY (tenant_id, team_id) REFERENCES teams (tenant_id, id),
    FOREIGN KEY (tenant_id, person_id) REFERENCES people (tenant_id, id)
);
CREATE INDEX team_members_person ON team_members (tenant_id, person_id);

CREATE TABLE devices (
    tenant_id uuid NOT NULL,
    id uuid NOT NULL,
    person_id uuid NOT NULL,
    token text NOT NULL CHECK (length(token) BETWEEN 1 AND 4096),
    app text NOT NULL CHECK (app IN ('member', 'manager')),
    platform text NOT NULL CHECK (platform IN ('ios', 'android', 'web')),
    provider text NOT NULL CHECK (provider IN ('fcm', 'apns')),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    -- Logout: the token may be registered again later.
    removed_at timestamptz,
    -- The provider reported the token dead: it is never used again.
    deactivated_at timestamptz,
    deactivation_reason text,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, person_id) REFERENCES people (tenant_id, id),
    CONSTRAINT devices_token_unique UNIQUE (tenant_id, provider, token),
    CHECK ((deactivated_at IS NULL) = (deactivation_reason IS NULL))
);
CREATE INDEX devices_person ON devices (tenant_id, person_id) WHERE removed_at IS NULL AND deactivated_at IS NULL;

CREATE TABLE activities (
    tenant_id uuid NOT NULL,
    id uuid NOT NULL,
    team_id uuid NOT NULL,
    manager_id uuid NOT NULL,
    assignee_id uuid NOT NULL,
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    priority text NOT NULL CHECK (priority IN ('p0', 'p1', 'p2', 'p3')),
    deadline date NOT NULL,
    status text NOT NULL CHECK (status IN ('assigned', 'running', 'completion_requested', 'approved')),
    version integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, team_id) REFERENCES teams (tenant_id, id),
    FOREIGN KEY (tenant_id, manager_id) REFERENCES people (tenant_id, id),
    FOREIGN KEY (tenant_id, assignee_id) REFERENCES people (tenant_id, id)
);
CREATE INDEX activities_assignee ON activities (tenant_id, assignee_id, status);
CREATE INDEX activities_team ON activities (tenant_id, team_id, status);

CREATE TABLE activity_transitions (
    tenant_id uuid NOT NULL,
    id uuid NOT NULL,
    activity_id uuid NOT NULL,
    actor_id uuid NOT NULL,
    action text NOT NULL CHECK (action IN ('assign', 'start', 'complete', 'approve', 'reject')),
    from_status text,
    to_status text NOT NULL,
    reason text,
    at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, activity_id) REFERENCES activities (tenant_id, id),
    FOREIGN KEY (tenant_id, actor_id) REFERENCES people (tenant_id, id)
);
CREATE INDEX activity_transitions_activity ON activity_transitions (tenant_id, activity_id, at);

-- Events, appended in the transaction that caused them. The payload is a snapshot of
-- everything needed to render the notification later, so renaming a person or an
-- activity does not rewrite history. seq orders events for the dispatcher.
CREATE TABLE outbox (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    id uuid NOT NULL,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    kind text NOT NULL,
    activity_id uuid,
    actor_id uuid NOT NULL,
    recipient_ids uuid[] NOT NULL,
    payload jsonb NOT NULL,
    occurred_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT outbox_seq_unique UNIQUE (seq)
);
CREATE INDEX outbox_activity ON outbox (tenant_id, activity_id, seq);

-- Row-level security on every tenant table.
DO $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['people', 'teams', 'team_members', 'devices', 'activities',
                                'activity_transitions', 'outbox'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', name);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', name);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON %I USING (tenant_id = herald_current_tenant()) '
            'WITH CHECK (tenant_id = herald_current_tenant())', name);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO herald_app', name);
    END LOOP;
END
$$;
GRANT EXECUTE ON FUNCTION herald_current_tenant() TO herald_app;
