-- A key's role (docs/access.md, "Key roles"): `admin` keys change the tenant-wide settings that
-- route or expose data (webhook, LLM endpoints, storage, database, email, keys, grants, import,
-- export, billing, account deletion); `agent` keys work with memories within their grants.
alter table api_keys add column role text not null default 'agent' check (role in ('admin', 'agent'));

-- A tenant that restricts nothing (no grant, no database of its own, where grants would be out of
-- this database's sight) has no data one key could take from another: its keys keep everything
-- they could do, as admins.
update api_keys k set role = 'admin'
 where not exists (select 1 from collection_grants g where g.tenant_id = k.tenant_id)
   and not exists (select 1 from database_configs d where d.tenant_id = k.tenant_id);

-- A tenant that restricts collections: a key without a grant is exactly the key that must not
-- reroute the restricted data, so only the account's own key is admin: its first key, followed
-- through rotations to the key that replaced it.
with recursive chain as (
    (select distinct on (tenant_id) tenant_id, id, 0 as depth from api_keys order by tenant_id, created_at, id)
    union all
    select k.tenant_id, k.id, c.depth + 1
      from chain c join api_keys a on a.tenant_id = c.tenant_id and a.id = c.id
      join api_keys k on k.tenant_id = a.tenant_id and k.id = a.replaced_by
     where c.depth < 1000
  ),
  owner as (select distinct on (tenant_id) tenant_id, id from chain order by tenant_id, depth desc)
update api_keys k set role = 'admin' from owner o where k.tenant_id = o.tenant_id and k.id = o.id and k.revoked_at is null;

-- That key revoked: the tenant's oldest active key, so every tenant keeps one admin.
update api_keys k set role = 'admin'
 where k.id = (select o.id from api_keys o where o.tenant_id = k.tenant_id and o.revoked_at is null order by o.created_at, o.id limit 1)
   and not exists (select 1 from api_keys a where a.tenant_id = k.tenant_id and a.role = 'admin' and a.revoked_at is null);
