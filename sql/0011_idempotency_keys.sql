-- Idempotency-Key for the HTTP API's creating requests: the first answer to a key is kept
-- for 24 hours and given again to a retry with the same body. Per credential, in the
-- credential's tenant. A row without a status is a request still being answered.
CREATE TABLE idempotency_keys (
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE RESTRICT,
    credential_id uuid NOT NULL,
    key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    request_sha256 bytea NOT NULL CHECK (length(request_sha256) = 32),
    status int,
    headers jsonb,
    body bytea,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, credential_id, key),
    FOREIGN KEY (tenant_id, credential_id) REFERENCES credentials (tenant_id, id) ON DELETE RESTRICT
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (tenant_id, created_at);

ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE idempotency_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON idempotency_keys
    USING (tenant_id = herald_current_tenant()) WITH CHECK (tenant_id = herald_current_tenant());
GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_keys TO herald_app;
