-- FCM installation ids and fresh tokens (DESIGN §19).
--
-- A device is addressed at its provider by the registration token its app obtained or, for
-- FCM, by its Firebase Installation ID: `address` says which, and `token` holds either. The
-- two are kept apart in the unique key, so an id can never be taken for a token.
ALTER TABLE devices ADD COLUMN address text NOT NULL DEFAULT 'token' CHECK (address IN ('token', 'fid'));
ALTER TABLE devices ADD CONSTRAINT devices_fid_is_fcm CHECK (address = 'token' OR provider = 'fcm');
ALTER TABLE devices DROP CONSTRAINT devices_token_unique;
ALTER TABLE devices ADD CONSTRAINT devices_token_unique UNIQUE (tenant_id, provider, address, token);

-- Freshness: `last_seen_at` is the registration's stamp. A device not registered again
-- within HERALD_DEVICE_REMOVE_AFTER is removed (as at logout) by the workers' hourly upkeep,
-- which looks for them on this index.
CREATE INDEX devices_last_seen ON devices (last_seen_at) WHERE removed_at IS NULL AND deactivated_at IS NULL;
GRANT UPDATE (removed_at) ON devices TO herald_dispatcher;
