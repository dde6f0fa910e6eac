-- Event snapshots are compressed with lz4 where the server has it: a message to a group
-- of 10,000 carries a 600 KB snapshot, which the worker reads once when it claims the event
-- and once per part of 1,000 recipients, and which pglz took about 5 ms to decompress each
-- time. (New snapshots only; the ones written before stay as they are, readable either
-- way.) A server built without lz4 keeps pglz.
DO $$
BEGIN
    ALTER TABLE outbox ALTER COLUMN payload SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    RAISE NOTICE 'this server has no lz4: event snapshots stay compressed with pglz';
END
$$;
