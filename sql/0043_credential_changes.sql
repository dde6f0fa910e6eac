-- Credentials are cached by each `herald serve` for at most 5 s (docs/api.md#credentials);
-- a change that ends or alters what a credential stands for tells every server at once with
-- a NOTIFY on `herald_credentials` whose payload is the tenant's id. A hint only: the cache's
-- time to live bounds what a server that missed it (its listener away) keeps.
CREATE FUNCTION herald_credentials_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('herald_credentials', OLD.tenant_id::text);
    ELSE
        PERFORM pg_notify('herald_credentials', NEW.tenant_id::text);
    END IF;
    RETURN NULL;
END
$$;

-- Revoked, its expiry moved, or removed (the once-a-minute stamp of its last use is not a change).
CREATE TRIGGER credentials_changed AFTER UPDATE ON credentials FOR EACH ROW
    WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
          OR OLD.person_id IS DISTINCT FROM NEW.person_id OR OLD.kind IS DISTINCT FROM NEW.kind)
    EXECUTE FUNCTION herald_credentials_changed();
CREATE TRIGGER credentials_removed AFTER DELETE ON credentials FOR EACH ROW
    EXECUTE FUNCTION herald_credentials_changed();

-- What a token's caller is: the person's address, name, language, zone and admin right.
CREATE TRIGGER people_credentials_changed AFTER UPDATE ON people FOR EACH ROW
    WHEN (OLD.email IS DISTINCT FROM NEW.email OR OLD.display_name IS DISTINCT FROM NEW.display_name
          OR OLD.locale IS DISTINCT FROM NEW.locale OR OLD.time_zone IS DISTINCT FROM NEW.time_zone
          OR OLD.is_admin IS DISTINCT FROM NEW.is_admin)
    EXECUTE FUNCTION herald_credentials_changed();
CREATE TRIGGER people_credentials_removed AFTER DELETE ON people FOR EACH ROW
    EXECUTE FUNCTION herald_credentials_changed();

-- The tenant every credential names (its slug and name are part of the caller).
CREATE FUNCTION herald_tenant_credentials_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('herald_credentials', OLD.id::text);
    RETURN NULL;
END
$$;
CREATE TRIGGER tenants_credentials_changed AFTER UPDATE OR DELETE ON tenants FOR EACH ROW
    EXECUTE FUNCTION herald_tenant_credentials_changed();
