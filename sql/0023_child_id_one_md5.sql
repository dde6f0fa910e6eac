-- herald_child_id as 0018 made it, with its key hashed once instead of twice: the same id
-- for the same parent and key (a part of a large event written again by a worker of either
-- version finds the rows the other wrote), about 2.8 → 1.4 µs a call. Fan-out calls it for
-- every notification and every delivery, in the part of a 10,000-person message's write that
-- PostgreSQL spends evaluating expressions.
CREATE OR REPLACE FUNCTION herald_child_id(parent uuid, key text) RETURNS uuid
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    -- The parent's first 12 hex digits (its time), version 7, 3 digits of the hash, variant
    -- 8, 15 more digits of the hash: both marks slipped into one string.
    SELECT overlay(overlay(left(replace(parent::text, '-', ''), 12) || left(md5(key), 18) PLACING '7' FROM 13 FOR 0)
                   PLACING '8' FROM 17 FOR 0)::uuid
$$;
