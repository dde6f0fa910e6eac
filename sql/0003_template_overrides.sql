-- Tenant overrides of the default message templates, validated before they are saved.
CREATE TABLE template_overrides (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    event text NOT NULL,
    locale text NOT NULL,
    source text NOT NULL CHECK (octet_length(source) <= 4096),
    updated_by text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, event, locale)
);

ALTER TABLE template_overrides ENABLE ROW LEVEL SECURITY;
ALTER TABLE template_overrides FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON template_overrides
    USING (tenant_id = herald_current_tenant()) WITH CHECK (tenant_id = herald_current_tenant());
GRANT SELECT, INSERT, UPDATE, DELETE ON template_overrides TO herald_app;
