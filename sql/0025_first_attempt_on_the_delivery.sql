-- A delivery sent at its first attempt (nearly all of them) keeps that attempt on its own
-- row instead of a row of delivery_attempts: the acknowledgement updates the delivery either
-- way, and the attempt's insert (a row and its key in the week's partition) was half of what
-- PostgreSQL spent acknowledging a delivery. Every other attempt (a retry, a refusal, one
-- that came after the lease passed on, and any attempt after the first) is a row of
-- delivery_attempts as before. History reads delivery_attempt_history, which holds both.
ALTER TABLE deliveries
    ADD COLUMN sent_by text,
    ADD COLUMN sent_attempt_id uuid,
    ADD COLUMN sent_attempt_started_at timestamptz;

-- Every attempt, as delivery_attempts had them all before: a first attempt kept on its
-- delivery reads as the row it would have been.
CREATE VIEW delivery_attempt_history WITH (security_invoker = true) AS
SELECT tenant_id, id, delivery_id, attempt, worker, started_at, finished_at, outcome, http_status, provider_error,
       message_id, next_attempt_at, counted
FROM delivery_attempts
UNION ALL
SELECT tenant_id, sent_attempt_id, id, 1, sent_by, sent_attempt_started_at, sent_at, 'delivered', http_status, NULL::text,
       message_id, NULL::timestamptz, true
FROM deliveries
WHERE sent_by IS NOT NULL;
GRANT SELECT ON delivery_attempt_history TO herald_app, herald_dispatcher;
