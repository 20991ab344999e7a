import { forbidden } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import type { PersonRole, PersonState } from '../../schemas/people.ts';
import { appendAudit } from '../events/audit.ts';
import type { IdentityProvider } from './identity-config.ts';

/** Who the provider says signed in, from a validated ID token. */
export interface SignedInIdentity {
  subject: string;
  email: string;
  name: string;
  groups: string[];
}

export interface ProvisionedPerson {
  id: string;
  email: string;
  name: string;
  role: PersonRole;
}

interface PersonRow extends ProvisionedPerson {
  state: PersonState;
  subject: string | null;
}

const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/**
 * The person a sign-in is for, in the sign-in's transaction (docs/sign-in.md, "Who may sign in"):
 * the one the provider's subject already names; else the one invited (or added) with that e-mail,
 * who takes the subject; else a new person with the default role when the e-mail's domain or one
 * of the groups is allowed. Anyone else, and a suspended or removed person, is refused with a 403.
 * Then the teams that follow a group are synced with the claim, and the sign-in is audited.
 */
export async function provision(tx: Queryable, tenantId: string, provider: IdentityProvider, who: SignedInIdentity): Promise<ProvisionedPerson> {
  const now = new Date();
  let how: 'returning' | 'invited' | 'created';
  let [person] = await tx.query<PersonRow>('select id, email, name, role, state, subject from people where tenant_id = $1 and subject = $2', [
    tenantId,
    who.subject,
  ]);
  if (person) how = 'returning';
  else {
    [person] = await tx.query<PersonRow>('select id, email, name, role, state, subject from people where tenant_id = $1 and lower(email) = lower($2)', [
      tenantId,
      who.email,
    ]);
    if (person) {
      // The e-mail finds a person only until their first sign-in binds the provider's identity.
      if (person.subject !== null) throw forbidden(`${who.email} belongs to another account of the identity provider`);
      how = 'invited';
    } else {
      const allowed = provider.allowed_domains.includes(domainOf(who.email)) || who.groups.some((g) => provider.allowed_groups.includes(g));
      if (!allowed) throw forbidden(`${who.email} is not a member of this organization: its domain and groups are not allowed, and it was not invited`);
      [person] = await tx.query<PersonRow>(
        `insert into people (tenant_id, id, email, name, role, state, subject, created_at) values ($1, $2, $3, $4, $5, 'active', $6, $7)
         returning id, email, name, role, state, subject`,
        [tenantId, newId(), who.email, who.name, provider.default_role, who.subject, now],
      );
      how = 'created';
    }
  }
  const p = person!;
  if (p.state === 'suspended' || p.state === 'removed') throw forbidden(`${p.email} is ${p.state} in this organization`);
  await tx.query(
    `update people set state = 'active', subject = $3, last_sign_in_at = $4, name = case when name = '' then $5 else name end
      where tenant_id = $1 and id = $2`,
    [tenantId, p.id, who.subject, now, who.name],
  );
  const teams = await syncTeams(tx, tenantId, p.id, who.groups);
  const label = p.name || who.name || p.email;
  await appendAudit(tx, tenantId, { id: p.id, label }, { action: 'people.signIn', target: `people/${p.id}`, detail: { how, ...teams } });
  return { id: p.id, email: p.email, name: p.name || who.name, role: p.role };
}

/**
 * Memberships that follow the group claim (source `provider`): added for each team whose group
 * the claim holds, removed for those it no longer does; memberships made in orgmem are left alone.
 */
async function syncTeams(tx: Queryable, tenantId: string, personId: string, groups: string[]): Promise<{ teams_joined: number; teams_left: number }> {
  const joined = await tx.query(
    `insert into team_members (tenant_id, team_id, person_id, role, source, created_at)
     select t.tenant_id, t.id, $2, 'member', 'provider', $4 from teams t where t.tenant_id = $1 and t.provider_group = any($3::text[])
     on conflict do nothing returning team_id`,
    [tenantId, personId, groups, new Date()],
  );
  const left = await tx.query(
    `delete from team_members m using teams t
      where m.tenant_id = $1 and m.person_id = $2 and m.source = 'provider' and t.tenant_id = m.tenant_id and t.id = m.team_id
        and (t.provider_group is null or not (t.provider_group = any($3::text[])))
      returning m.team_id`,
    [tenantId, personId, groups],
  );
  return { teams_joined: joined.length, teams_left: left.length };
}
