-- The key that replaced a rotated one. Rotation moves the grants to the new key; work the old one
-- started and that runs later (a queued job, an OAuth consent in progress) goes on as its
-- successor instead of being refused as revoked (services/access/authenticate.ts, actAs).
alter table api_keys add column replaced_by uuid;
