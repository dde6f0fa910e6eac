-- A notification about an activity that moved on before its event was fanned out is not
-- sent: fan-out writes it as cancelled, with the reason "superseded by <event>".
ALTER TABLE notifications DROP CONSTRAINT notifications_status_check;
ALTER TABLE notifications ADD CONSTRAINT notifications_status_check
    CHECK (status IN ('queued', 'no_device', 'suppressed', 'cancelled')) NOT VALID;
ALTER TABLE notifications VALIDATE CONSTRAINT notifications_status_check;
