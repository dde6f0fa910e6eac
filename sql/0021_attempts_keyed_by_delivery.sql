-- An attempt's key starts with its delivery: (tenant_id, delivery_id, id). History reads a
-- delivery's attempts on that key's prefix, and an acknowledgement written twice finds its
-- attempt by all three, so the separate index on (tenant_id, delivery_id, attempt) goes: one
-- index entry fewer for every attempt recorded. (An attempt id is its delivery's millisecond
-- and 74 random bits: unique on its own all the same.)
ALTER TABLE delivery_attempts DROP CONSTRAINT delivery_attempts_pkey;
ALTER TABLE delivery_attempts ADD PRIMARY KEY (tenant_id, delivery_id, id);
DROP INDEX delivery_attempts_delivery;
