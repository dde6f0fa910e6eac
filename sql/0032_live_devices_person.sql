-- A live socket's device=TOKEN speaks for that phone only while it belongs to the socket's
-- person: the row now records whose socket said the app was in the foreground, and a chat
-- push is skipped (reason live) only when the device still belongs to that person. (A token
-- that moved to another person had that person's pushes skipped, though they had no socket.)
-- The rows are a socket's passing state: those from before are dropped, and a socket says
-- it again when its app next comes to the foreground.
DELETE FROM live_devices;
ALTER TABLE live_devices ADD COLUMN person_id uuid NOT NULL;
ALTER TABLE live_devices DROP CONSTRAINT live_devices_pkey;
ALTER TABLE live_devices ADD PRIMARY KEY (tenant_id, device_id, server_id, person_id);
