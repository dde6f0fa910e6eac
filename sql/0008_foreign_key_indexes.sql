-- Indexes behind the foreign keys that had none leading with their columns. Deleting a
-- tenant checks each deleted outbox event, team and person against these, one row at a
-- time; without them each check read every notification or conversation of the tenant.
CREATE INDEX notifications_event ON notifications (tenant_id, event_id);
CREATE INDEX conversations_team ON conversations (tenant_id, team_id);
CREATE INDEX conversations_creator ON conversations (tenant_id, created_by);
