-- An Idempotency-Key's answer belongs to the credential and to the person it acted as: a
-- tenant key acting for two people (Herald-On-Behalf-Of) with the same key and body got the
-- first person's answer for the second, and nothing was written for the second. `person_id`
-- is the acting person, or the nil UUID when a tenant key acts as itself (a key column
-- cannot be null).
ALTER TABLE idempotency_keys
    ADD COLUMN person_id uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (tenant_id, credential_id, person_id, key);
