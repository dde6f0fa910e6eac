-- Reminders, escalation and deadline notices (DESIGN.md §14).
--
-- A tenant's policy: one row per tenant that changed the defaults, the JSON document of
-- `herald policy show` and `GET /v1/policy`.
CREATE TABLE tenant_policies (
    tenant_id uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE RESTRICT,
    policy jsonb NOT NULL,
    updated_by uuid,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Timers beside the outbox: what an activity waits for, and when it is due. A transition
-- writes them in its own transaction; a worker fires a due one in one transaction that locks
-- it (FOR UPDATE SKIP LOCKED), reads the activity again, and either appends the event to
-- the outbox or writes why not. The row lock is the lease: a worker that dies mid-firing
-- leaves nothing behind (its transaction rolls back), and `period` makes a kind fire at
-- most once per wait (the activity's version when the wait began; 0 for the deadline).
CREATE TABLE activity_timers (
    tenant_id uuid NOT NULL,
    id uuid NOT NULL,
    activity_id uuid NOT NULL,
    kind text NOT NULL CHECK (kind IN ('approval_reminder', 'escalation', 'deadline_soon', 'overdue')),
    period integer NOT NULL,
    due_at timestamptz NOT NULL,
    -- When the wait it chases began (the completion request, or the assignment).
    waiting_since timestamptz NOT NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'fired', 'skipped', 'cancelled')),
    reason text,
    event_id uuid,
    settled_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT activity_timers_once UNIQUE (tenant_id, activity_id, kind, period),
    FOREIGN KEY (tenant_id, activity_id) REFERENCES activities (tenant_id, id) ON DELETE RESTRICT,
    CHECK ((status = 'pending') = (settled_at IS NULL)),
    CHECK ((status = 'fired') = (event_id IS NOT NULL))
);
-- What workers look for: pending timers by due time, across tenants.
CREATE INDEX activity_timers_due ON activity_timers (due_at) WHERE status = 'pending';

ALTER TABLE tenant_policies ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenant_policies FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenant_policies
    USING (tenant_id = herald_current_tenant()) WITH CHECK (tenant_id = herald_current_tenant());
GRANT SELECT, INSERT, UPDATE, DELETE ON tenant_policies TO herald_app;

ALTER TABLE activity_timers ENABLE ROW LEVEL SECURITY;
ALTER TABLE activity_timers FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON activity_timers
    USING (tenant_id = herald_current_tenant()) WITH CHECK (tenant_id = herald_current_tenant());
GRANT SELECT, INSERT, UPDATE, DELETE ON activity_timers TO herald_app;
-- Workers find due timers across tenants (and fire each in its tenant's scope).
CREATE POLICY dispatcher ON activity_timers FOR SELECT TO herald_dispatcher USING (true);
GRANT SELECT ON activity_timers TO herald_dispatcher;
