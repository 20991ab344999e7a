import { expect } from 'vitest';
import type { App } from '../../src/core/context.ts';
import { createSession } from '../../src/services/access/sessions.ts';
import { call } from './client.ts';
import type { Tenant } from './client.ts';

/** A person of a tenant, signed in: their session token (sent as `Bearer mvs_...`) and a key they made (which acts for them). */
export interface SignedIn {
  id: string;
  email: string;
  /** The session's token: what the `orgmem_session` cookie holds; as a bearer it authenticates like a key. */
  session: string;
  /** An agent key the person made with their session: it acts for them ('' for a viewer, who makes none). */
  key: string;
  keyId: string;
}

/**
 * A person invited through the API and signed in. The sign-in itself (the provider's answer,
 * provisioning: test/signin.test.ts) is stood in for by what it leaves: the person active with a
 * session.
 */
export async function signedIn(
  url: string,
  app: App,
  tenant: Tenant,
  email: string,
  role: 'owner' | 'admin' | 'member' | 'viewer' = 'member',
): Promise<SignedIn> {
  const invited = await tenant.api('POST', '/v1/memory/people', { email, role });
  expect(invited.status, JSON.stringify(invited.body)).toBe(201);
  const id = invited.body.id as string;
  await app.platform.query(`update people set state = 'active', subject = $3 where tenant_id = $1 and id = $2`, [tenant.id, id, `sub-${id}`]);
  const { token } = await createSession(app.platform, tenant.id, id);
  // Any person makes keys for themselves but a viewer, who only reads (keys.create is a write).
  if (role === 'viewer') return { id, email, session: token, key: '', keyId: '' };
  // An owner's or admin's key is an admin key, as they are; anyone else's an agent key.
  const keyRole = role === 'owner' || role === 'admin' ? 'admin' : 'agent';
  const made = await call(url, 'POST', '/v1/memory/keys', { key: token, body: { label: `${email}'s agent`, role: keyRole } });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  expect(made.body.acts_for).toBe(id);
  return { id, email, session: token, key: made.body.api_key, keyId: made.body.id };
}
