-- What a person who left a conversation (or was removed from it) goes on seeing of it: the
-- conversation as it was when they left (its name, photo, the others in it and how far each
-- had read), so that nothing that happened later shows (a later name, photo, participants,
-- presence or read positions). Written when they leave. Those who left before this version
-- keep the name and photo the conversation has now, and no participants.
ALTER TABLE conversation_participants ADD COLUMN left_snapshot jsonb;
UPDATE conversation_participants cp SET left_snapshot = jsonb_build_object('name', c.name, 'photoURL', c.photo_url, 'participants', '[]'::jsonb)
FROM conversations c
WHERE cp.left_at IS NOT NULL AND c.tenant_id = cp.tenant_id AND c.id = cp.conversation_id;
