-- Web Push, direct (docs/apps.md#web-push): a browser's subscription is a device of provider
-- `webpush` (platform `web`). Its token is the subscription's endpoint; the two keys the
-- browser gave, which every push to it is encrypted with, are kept beside it, base64url.
DO $$
DECLARE
    target record;
BEGIN
    -- The provider checks of 0002, 0004 and 0018, whatever PostgreSQL named them.
    FOR target IN
        SELECT c.conrelid::regclass AS tab, c.conname
        FROM pg_constraint c
        WHERE c.contype = 'c' AND c.conrelid IN ('devices'::regclass, 'deliveries'::regclass, 'provider_pauses'::regclass)
          AND pg_get_constraintdef(c.oid) = 'CHECK ((provider = ANY (ARRAY[''fcm''::text, ''apns''::text])))'
          AND c.coninhcount = 0
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', target.tab, target.conname);
        EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (provider IN (''fcm'', ''apns'', ''webpush''))', target.tab, target.conname);
    END LOOP;
END
$$;

ALTER TABLE devices ADD COLUMN webpush_p256dh text, ADD COLUMN webpush_auth text;
ALTER TABLE devices ADD CONSTRAINT devices_webpush_keys
    CHECK ((provider = 'webpush') = (webpush_p256dh IS NOT NULL AND webpush_auth IS NOT NULL)
           AND (webpush_p256dh IS NULL) = (webpush_auth IS NULL));
ALTER TABLE devices ADD CONSTRAINT devices_webpush_is_web CHECK (provider <> 'webpush' OR (platform = 'web' AND kind = 'alert'));
