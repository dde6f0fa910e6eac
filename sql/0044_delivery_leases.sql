-- A lease per claimed batch (docs/operating/scaling.md#a-delivery-written-twice): a worker that
-- takes deliveries to send writes one row for each tenant's share of its claim, and the
-- deliveries themselves stay `queued` until their outcome is written. A delivery is written
-- twice (created, settled), not three times (created, leased, settled).
--
-- `deliveries` and `notifications` name the batch's deliveries by key; `attempts` holds each
-- one's attempts when it was taken: when a lease runs out (its worker died or stalled) the
-- deliveries still at that count are counted one attempt more, the one the worker was making.
-- A row is removed with its batch's last outcome, when the lease runs out, or when its worker
-- gives it back at shutdown.
CREATE TABLE delivery_leases (
    tenant_id uuid NOT NULL,
    id uuid NOT NULL,
    worker text NOT NULL,
    expires_at timestamptz NOT NULL,
    deliveries uuid[] NOT NULL,
    notifications uuid[] NOT NULL,
    attempts integer[] NOT NULL,
    PRIMARY KEY (tenant_id, id),
    CHECK (cardinality(deliveries) = cardinality(notifications) AND cardinality(deliveries) = cardinality(attempts))
);
CREATE INDEX delivery_leases_expiry ON delivery_leases (expires_at);
ALTER TABLE delivery_leases ENABLE ROW LEVEL SECURITY;
ALTER TABLE delivery_leases FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON delivery_leases
    USING (tenant_id = herald_current_tenant()) WITH CHECK (tenant_id = herald_current_tenant());
CREATE POLICY dispatcher ON delivery_leases TO herald_dispatcher USING (true) WITH CHECK (true);
CREATE POLICY maintenance ON delivery_leases TO CURRENT_USER USING (true) WITH CHECK (true);
-- Fan-out, in the tenant's scope, leases what it creates to its own worker; a tenant's
-- statements that cancel queued deliveries (supersede, a newer badge or Live Activity update)
-- read it to leave alone what is being sent.
GRANT SELECT, INSERT ON delivery_leases TO herald_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON delivery_leases TO herald_dispatcher;

-- Whether a worker is sending this queued delivery now: the one test every statement that
-- takes or cancels queued deliveries makes (a SQL function the planner inlines).
CREATE FUNCTION herald_delivery_leased(tenant uuid, delivery uuid) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM delivery_leases l WHERE l.tenant_id = tenant AND delivery = ANY (l.deliveries))
$$;
GRANT EXECUTE ON FUNCTION herald_delivery_leased(uuid, uuid) TO herald_app, herald_dispatcher;
