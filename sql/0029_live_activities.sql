-- Live Activities for P0 activities (DESIGN §19).
--
-- A device's `kind` says what its token is for: `alert` (every push Herald sends),
-- `liveactivity` (an iPhone's ActivityKit push-to-start token) or `liveactivity_update` (the
-- update token of one activity's Live Activity, which the app uploads once it runs, with the
-- activity it belongs to). Ordinary fan-out sends only to `alert` devices. Live Activity
-- tokens are APNs tokens of iPhones.
ALTER TABLE devices ADD COLUMN kind text NOT NULL DEFAULT 'alert' CHECK (kind IN ('alert', 'liveactivity', 'liveactivity_update'));
ALTER TABLE devices ADD COLUMN activity_id uuid;
ALTER TABLE devices ADD CONSTRAINT devices_update_token_has_activity CHECK ((kind = 'liveactivity_update') = (activity_id IS NOT NULL));
ALTER TABLE devices ADD CONSTRAINT devices_live_activity_is_apns
    CHECK (kind = 'alert' OR (provider = 'apns' AND platform = 'ios' AND address = 'token'));
ALTER TABLE devices ADD CONSTRAINT devices_activity_fk FOREIGN KEY (tenant_id, activity_id) REFERENCES activities (tenant_id, id) ON DELETE RESTRICT;
CREATE INDEX devices_activity ON devices (tenant_id, activity_id) WHERE activity_id IS NOT NULL;
-- Whether a P0's assignee or manager has any Live Activity token at all: fan-out asks before it
-- writes anything for one (most people have none, and the answer is then one probe of an
-- empty index).
CREATE INDEX devices_live_activity ON devices (tenant_id, person_id, app)
    WHERE kind <> 'alert' AND removed_at IS NULL AND deactivated_at IS NULL;

-- A Live Activity push's notification holds what the APNs request is made of
-- (`LiveActivityContent` as JSON): the event, the attributes, the content state and its dates.
ALTER TABLE notifications ADD COLUMN live jsonb;
