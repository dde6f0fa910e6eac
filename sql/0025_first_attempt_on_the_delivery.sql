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
-- delivery reads as the row it would have been. With the delivery's notification, by which
-- history asks (a notification's deliveries on their key, then their attempts on theirs):
-- asked by delivery, the kept attempts had no key to be found by but the tenant, and a
-- notification's history read every delivery the tenant sent that week.
CREATE VIEW delivery_attempt_history WITH (security_invoker = true) AS
SELECT a.tenant_id, d.notification_id, a.id, a.delivery_id, a.attempt, a.worker, a.started_at, a.finished_at, a.outcome,
       a.http_status, a.provider_error, a.message_id, a.next_attempt_at, a.counted
FROM delivery_attempts a JOIN deliveries d ON d.tenant_id = a.tenant_id AND d.id = a.delivery_id
UNION ALL
SELECT tenant_id, notification_id, sent_attempt_id, id, 1, sent_by, sent_attempt_started_at, sent_at, 'delivered',
       http_status, NULL::text, message_id, NULL::timestamptz, true
FROM deliveries
WHERE sent_by IS NOT NULL;
GRANT SELECT ON delivery_attempt_history TO herald_app, herald_dispatcher;
