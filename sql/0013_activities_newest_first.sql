-- Activity lists are pages, newest first (ORDER BY created_at DESC, id DESC, keyset cursor):
-- with this index a page reads its rows in order and stops at the limit, instead of
-- sorting every activity of the tenant (1.8 s a page at 20,000 activities).
CREATE INDEX activities_newest ON activities (tenant_id, created_at DESC, id DESC);
