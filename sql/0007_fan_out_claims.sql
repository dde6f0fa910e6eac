-- Fan-out leases the deliveries it creates to its own worker when that worker has room, so
-- a fresh notification goes out without waiting for a separate claim. It runs in the
-- tenant's scope (herald_app) and must skip providers paused by a configuration error.
GRANT SELECT ON provider_pauses TO herald_app;
