-- Tenants: the organisations everything else belongs to.
CREATE TABLE tenants (
    id uuid PRIMARY KEY,
    slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
