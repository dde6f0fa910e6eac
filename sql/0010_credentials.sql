-- Credentials for the HTTP API: person tokens (act as one person) and tenant keys (act as
-- the tenant's admin, or on behalf of a person). Only a SHA-256 hash of the secret is kept,
-- with a short public prefix to find it by. A credential belongs to exactly one tenant.
--
-- A request names no tenant: its credential does. Finding the credential therefore works
-- across tenants, as herald_authenticator, a role that may read credentials (and stamp
-- their last use) and nothing else. Everything after that runs in the credential's tenant.

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'herald_authenticator') THEN
        CREATE ROLE herald_authenticator NOLOGIN NOSUPERUSER NOBYPASSRLS;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END
$$;

DO $$
BEGIN
    IF NOT pg_has_role(current_user, 'herald_authenticator', 'MEMBER') THEN
        EXECUTE format('GRANT herald_authenticator TO %I', current_user);
    END IF;
END
$$;

CREATE TABLE credentials (
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE RESTRICT,
    id uuid NOT NULL,
    kind text NOT NULL CHECK (kind IN ('person_token', 'tenant_key')),
    -- The person a token acts as; NULL for a tenant key.
    person_id uuid,
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    -- Public: how a presented secret finds its row (60 random bits; unique per tenant,
    -- and in practice everywhere, but keys stay tenant-first, so lookups check the hash of
    -- every row with the prefix).
    prefix text NOT NULL CHECK (prefix ~ '^[a-z2-7]{12}$'),
    secret_sha256 bytea NOT NULL CHECK (length(secret_sha256) = 32),
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by text NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz,
    last_used_at timestamptz,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, prefix),
    FOREIGN KEY (tenant_id, person_id) REFERENCES people (tenant_id, id) ON DELETE RESTRICT,
    CHECK ((kind = 'person_token') = (person_id IS NOT NULL))
);
CREATE INDEX credentials_prefix ON credentials (prefix);
CREATE INDEX credentials_person ON credentials (tenant_id, person_id);

ALTER TABLE credentials ENABLE ROW LEVEL SECURITY;
ALTER TABLE credentials FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON credentials
    USING (tenant_id = herald_current_tenant()) WITH CHECK (tenant_id = herald_current_tenant());
GRANT SELECT, INSERT, UPDATE, DELETE ON credentials TO herald_app;

CREATE POLICY authenticator ON credentials TO herald_authenticator USING (true) WITH CHECK (true);
GRANT SELECT, UPDATE (last_used_at) ON credentials TO herald_authenticator;
GRANT SELECT ON tenants TO herald_authenticator;
