-- Chat: conversations of a team (direct: two people; group: three or more, a name, an
-- optional photo), their participants (muted, last-read position, presence), and messages
-- (system messages for joins, leaves and renames; a client id for offline queues).

CREATE TABLE conversations (
    tenant_id uuid NOT NULL,
    id uuid NOT NULL,
    team_id uuid NOT NULL,
    kind text NOT NULL CHECK (kind IN ('direct', 'group')),
    name text CHECK (name IS NULL OR length(name) BETWEEN 1 AND 200),
    photo_url text CHECK (photo_url IS NULL OR length(photo_url) BETWEEN 1 AND 2048),
    created_by uuid NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, team_id) REFERENCES teams (tenant_id, id),
    FOREIGN KEY (tenant_id, created_by) REFERENCES people (tenant_id, id),
    CHECK (kind = 'group' OR (name IS NULL AND photo_url IS NULL))
);

CREATE TABLE conversation_participants (
    tenant_id uuid NOT NULL,
    conversation_id uuid NOT NULL,
    person_id uuid NOT NULL,
    muted boolean NOT NULL DEFAULT false,
    -- The seq of the last message this person has read.
    last_read_seq bigint NOT NULL DEFAULT 0,
    -- While in the future, the person has the conversation open: no push for it.
    viewing_until timestamptz,
    joined_at timestamptz NOT NULL DEFAULT now(),
    left_at timestamptz,
    PRIMARY KEY (tenant_id, conversation_id, person_id),
    FOREIGN KEY (tenant_id, conversation_id) REFERENCES conversations (tenant_id, id),
    FOREIGN KEY (tenant_id, person_id) REFERENCES people (tenant_id, id)
);
CREATE INDEX conversation_participants_person ON conversation_participants (tenant_id, person_id) WHERE left_at IS NULL;

CREATE TABLE messages (
    tenant_id uuid NOT NULL,
    id uuid NOT NULL,
    conversation_id uuid NOT NULL,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    sender_id uuid NOT NULL,
    text text NOT NULL CHECK (length(text) BETWEEN 1 AND 4000),
    is_system boolean NOT NULL DEFAULT false,
    client_id text CHECK (client_id IS NULL OR length(client_id) BETWEEN 1 AND 200),
    -- When the sender's device says it was sent (an offline queue may deliver it late).
    sent_at timestamptz NOT NULL,
    stored_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT messages_seq_unique UNIQUE (seq),
    CONSTRAINT messages_client_once UNIQUE (tenant_id, sender_id, client_id),
    FOREIGN KEY (tenant_id, conversation_id) REFERENCES conversations (tenant_id, id),
    FOREIGN KEY (tenant_id, sender_id) REFERENCES people (tenant_id, id)
);
CREATE INDEX messages_conversation ON messages (tenant_id, conversation_id, seq);

ALTER TABLE outbox ADD COLUMN message_id uuid;
CREATE INDEX outbox_message ON outbox (tenant_id, message_id) WHERE message_id IS NOT NULL;

DO $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['conversations', 'conversation_participants', 'messages'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', name);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', name);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON %I USING (tenant_id = herald_current_tenant()) '
            'WITH CHECK (tenant_id = herald_current_tenant())', name);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO herald_app', name);
    END LOOP;
END
$$;
