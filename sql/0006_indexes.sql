-- Indexes behind foreign keys that deleting a person or a device checks (and that history
-- and token hygiene read): without them each deleted device scans every delivery.
CREATE INDEX deliveries_device ON deliveries (tenant_id, device_id);
CREATE INDEX devices_owner ON devices (tenant_id, person_id);
CREATE INDEX messages_sender ON messages (tenant_id, sender_id);
CREATE INDEX conversation_participants_people ON conversation_participants (tenant_id, person_id);
CREATE INDEX activities_manager ON activities (tenant_id, manager_id);
CREATE INDEX activity_transitions_actor ON activity_transitions (tenant_id, actor_id);
CREATE INDEX outbox_actor ON outbox (tenant_id, actor_id);

-- Every status change of a delivery rewrites each of its indexes (no HOT update is possible
-- when a partial index's predicate column changes), so keep only the ones a query uses:
-- nothing looks deliveries up by sent_at.
DROP INDEX deliveries_sent;
