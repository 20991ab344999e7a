import type { App } from '../../core/context.ts';
import { iso } from '../../core/ids.ts';
import type { PersonRole } from '../../schemas/people.ts';
import { hashKey } from '../access/keys.ts';

/** What the dashboard learns of its cookie's session (docs/sign-in.md, "Cookies and CSRF"). */
export interface SessionView {
  person: { id: string; email: string; name: string; role: PersonRole };
  tenant: { id: string; name: string };
  csrf: string;
  expires_at: string;
}

/** The live session of a token, of an active person; null otherwise (ended, expired, suspended...). */
export async function sessionView(app: App, token: string): Promise<SessionView | null> {
  const [row] = await app.platform.query<{
    csrf: string;
    expires_at: Date;
    person_id: string;
    email: string;
    name: string;
    role: PersonRole;
    tenant_id: string;
    tenant_name: string;
  }>(
    `select s.csrf, s.expires_at, p.id as person_id, p.email, p.name, p.role, t.id as tenant_id, t.name as tenant_name
       from person_sessions s join people p on p.tenant_id = s.tenant_id and p.id = s.person_id join tenants t on t.id = s.tenant_id
      where s.token_hash = $1 and s.revoked_at is null and s.expires_at > now() and p.state = 'active'`,
    [hashKey(token)],
  );
  if (!row) return null;
  return {
    person: { id: row.person_id, email: row.email, name: row.name, role: row.role },
    tenant: { id: row.tenant_id, name: row.tenant_name },
    csrf: row.csrf,
    expires_at: iso(row.expires_at)!,
  };
}
