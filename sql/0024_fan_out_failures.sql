-- What went wrong with an event's fan-out, for the admin (`herald why`) and for the queue.
-- An event whose own fan-out keeps failing (a data error the database raises for its rows
-- alone, never a lost connection) must not hold the queue behind it forever: after a batch
-- fails that way, the next one is written event by event, each in a savepoint, and an event
-- that fails alone is counted here with its error. After `fanOutAttempts` of them, or at
-- once when its snapshot cannot be read, it is passed over: marked fanned out (what was
-- written of it stays) and left in the outbox with the error.
ALTER TABLE outbox
    ADD COLUMN fan_out_failures integer NOT NULL DEFAULT 0,
    ADD COLUMN fan_out_error text,
    ADD COLUMN passed_over_at timestamptz;
