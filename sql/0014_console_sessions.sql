-- Sessions of the admin console (/console): a person token or tenant key is exchanged, once,
-- for a session cookie. Only the SHA-256 of the cookie's secret is kept; the session dies
-- with its credential (revoked or expired), at its own expiry, or at sign-out. Each holds
-- the CSRF token its forms must carry.
CREATE TABLE console_sessions (
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE RESTRICT,
    id uuid NOT NULL,
    credential_id uuid NOT NULL,
    secret_sha256 bytea NOT NULL CHECK (length(secret_sha256) = 32),
    csrf_token text NOT NULL CHECK (length(csrf_token) BETWEEN 32 AND 128),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    ended_at timestamptz,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, credential_id) REFERENCES credentials (tenant_id, id) ON DELETE RESTRICT
);
CREATE INDEX console_sessions_credential ON console_sessions (tenant_id, credential_id);
-- A cookie names its session by id alone (the tenant is what the session tells).
CREATE UNIQUE INDEX console_sessions_id ON console_sessions (id);

ALTER TABLE console_sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE console_sessions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON console_sessions
    USING (tenant_id = herald_current_tenant()) WITH CHECK (tenant_id = herald_current_tenant());
GRANT SELECT, INSERT, UPDATE, DELETE ON console_sessions TO herald_app;

CREATE POLICY authenticator ON console_sessions FOR SELECT TO herald_authenticator USING (true);
GRANT SELECT ON console_sessions TO herald_authenticator;
