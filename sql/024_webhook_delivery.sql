-- What the tenant can see of its webhook's deliveries (docs/webhooks.md, "Delivery"): the last
-- delivered event, and the last failure with its reason (a refused target, a status, a timeout),
-- which would otherwise be in the server's log only.
alter table webhooks add column last_delivered_at timestamptz;
alter table webhooks add column last_error text;
alter table webhooks add column last_error_at timestamptz;
