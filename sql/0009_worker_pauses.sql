-- A pause belongs to the worker whose configuration (credentials, endpoint) failed, or whose
-- view of the endpoint is that it does not answer: other workers keep sending. One row per
-- provider and worker, a record for `herald stats`; no claim reads it any more.
ALTER TABLE provider_pauses DROP CONSTRAINT provider_pauses_pkey;
ALTER TABLE provider_pauses ADD PRIMARY KEY (provider, worker);
COMMENT ON TABLE provider_pauses IS
    'Providers a worker holds back: its configuration failed, or the endpoint does not answer. Not read by claims; other workers keep sending.';
