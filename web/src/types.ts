import type { Tenant } from '../../src/schemas/access.ts';

/** GET /v1/memory/admin/me: the tenant and the key the dashboard signed in with. */
export type Me = Tenant & { key: { id: string; label: string; read_only: boolean } };
