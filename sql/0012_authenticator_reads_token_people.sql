-- A person token's person is part of who a request is. The authenticator reads that person
-- in the query that finds the credential (one round trip, not a second transaction), and
-- it may read only people a credential names, and only the columns a Person has.

CREATE POLICY authenticator ON people FOR SELECT TO herald_authenticator
    USING (EXISTS (SELECT 1 FROM credentials c WHERE c.tenant_id = people.tenant_id AND c.person_id = people.id));
GRANT SELECT (tenant_id, id, email, display_name, locale, time_zone, is_admin, created_at) ON people TO herald_authenticator;
