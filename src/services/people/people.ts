import type { AuthedCtx } from '../../core/context.ts';
import { badRequest, conflict, forbidden, notFound } from '../../core/errors.ts';
import { iso, isUuid, newId } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import type { Person, PersonRole, PersonState } from '../../schemas/people.ts';
import { endSessionsOf } from '../access/sessions.ts';
import { linkBase } from '../access/signup.ts';
import { enqueueMail } from '../events/mail.ts';
import { emitTenantEvent } from '../events/tenant-events.ts';

/**
 * The people of a tenant (docs/people.md, "People"): invited by an admin or provisioned at a first
 * sign-in (provision.ts), their role, and suspension or removal, which ends their sessions and,
 * since authentication reads the person with every key that acts for them, those keys' access on
 * their next call.
 */

interface PersonRow {
  id: string;
  email: string;
  name: string;
  role: PersonRole;
  state: PersonState;
  created_at: Date;
  last_sign_in_at: Date | null;
  teams: Person['teams'];
}

const SELECT = `select p.id, p.email, p.name, p.role, p.state, p.created_at, p.last_sign_in_at,
    coalesce((select json_agg(json_build_object('id', t.id, 'name', t.name, 'role', m.role) order by t.name)
                from team_members m join teams t on t.tenant_id = m.tenant_id and t.id = m.team_id
               where m.tenant_id = p.tenant_id and m.person_id = p.id), '[]') as teams
  from people p`;

const view = (r: PersonRow): Person => ({
  id: r.id,
  email: r.email,
  name: r.name,
  role: r.role,
  state: r.state,
  teams: r.teams,
  created_at: iso(r.created_at)!,
  last_sign_in_at: iso(r.last_sign_in_at),
});

/** The tenant's people, removed ones included when asked (their names stay in the audit log). */
export async function listPeople(ctx: AuthedCtx, input: { state?: PersonState }): Promise<Person[]> {
  const rows = await ctx.app.platform.query<PersonRow>(
    `${SELECT} where p.tenant_id = $1 and ($2::text is null and p.state <> 'removed' or p.state = $2) order by lower(p.email)`,
    [ctx.tenant.id, input.state ?? null],
  );
  return rows.map(view);
}

export async function getPerson(q: Queryable, tenantId: string, id: string): Promise<Person> {
  const [row] = isUuid(id) ? await q.query<PersonRow>(`${SELECT} where p.tenant_id = $1 and p.id = $2`, [tenantId, id]) : [];
  if (!row) throw notFound(`Person ${id} not found`);
  return view(row);
}

/** Whether the caller may hand out or take away the owner role: an owner, or a key of no person (the tenant's own). */
const isOwner = (ctx: AuthedCtx) => !ctx.agent.for || ctx.agent.for.role === 'owner';

/**
 * Invites a person by e-mail: an `invited` person, who becomes active at their first sign-in
 * through the tenant's provider, and a mail with the sign-in link. 409 when the e-mail is a person
 * of the tenant already.
 */
export async function invitePerson(ctx: AuthedCtx, input: { email: string; name?: string; role: PersonRole }): Promise<Person> {
  if (input.role === 'owner' && !isOwner(ctx)) throw forbidden('Only an owner may make another person an owner');
  const id = newId();
  return ctx.app.platform.transaction(async (tx) => {
    const rows = await tx.query(
      `insert into people (tenant_id, id, email, name, role, state) values ($1, $2, $3, $4, $5, 'invited')
       on conflict (tenant_id, lower(email)) do nothing returning id`,
      [ctx.tenant.id, id, input.email, input.name ?? '', input.role],
    );
    if (!rows.length) throw conflict(`${input.email} is already a person of this tenant`);
    const link = `${linkBase(ctx.app)}/v1/auth/oidc/start?tenant=${ctx.tenant.id}`;
    await enqueueMail(ctx.app, tx, {
      to: input.email,
      subject: `You are invited to ${ctx.tenant.name}'s memory`,
      text: `${ctx.agent.label} invited you to ${ctx.tenant.name} on orgmem as ${input.role}.\n\nSign in with your organization's account: ${link}\n`,
    });
    return getPerson(tx, ctx.tenant.id, id);
  });
}

/**
 * Changes a person's role or state (`active` or `suspended`). Suspending ends their sessions; their
 * keys are refused from their next call (authentication reads the person). The tenant keeps at
 * least one active owner.
 */
export async function updatePerson(ctx: AuthedCtx, id: string, input: { role?: PersonRole; state?: 'active' | 'suspended'; name?: string }): Promise<Person> {
  return ctx.app.platform.transaction(async (tx) => {
    const before = await lockPerson(tx, ctx, id);
    if (before.state === 'removed') throw badRequest(`${before.email} was removed: invite them again instead`);
    if ((input.role === 'owner' || before.role === 'owner') && input.role !== undefined && input.role !== before.role && !isOwner(ctx)) {
      throw forbidden("Only an owner may make a person an owner or change an owner's role");
    }
    if (input.state === 'active' && before.state === 'invited')
      throw badRequest(`${before.email} has not signed in yet: an invited person becomes active at the first sign-in`);
    await tx.query(`update people set role = coalesce($3, role), state = coalesce($4, state), name = coalesce($5, name) where tenant_id = $1 and id = $2`, [
      ctx.tenant.id,
      id,
      input.role ?? null,
      input.state ?? null,
      input.name ?? null,
    ]);
    if (before.role === 'owner') await keepAnOwner(tx, ctx.tenant.id);
    if (input.state === 'suspended' && before.state !== 'suspended') {
      await endSessionsOf(tx, ctx.tenant.id, id);
      await emitTenantEvent(tx, ctx, 'person.suspended', { person: { id, email: before.email } });
    }
    if (input.role !== undefined && input.role !== before.role) {
      await emitTenantEvent(tx, ctx, 'person.role_changed', { person: { id, email: before.email }, from: before.role, to: input.role });
    }
    return getPerson(tx, ctx.tenant.id, id);
  });
}

/**
 * Removes a person for good: kept as `removed` (the audit log and their memories still name them),
 * out of every team, sessions ended, keys refused from their next call. Their personal
 * collections stay, readable by no one but an admin who changes their scope.
 */
export async function removePerson(ctx: AuthedCtx, id: string): Promise<void> {
  await ctx.app.platform.transaction(async (tx) => {
    const before = await lockPerson(tx, ctx, id);
    if (before.state === 'removed') throw notFound(`Person ${id} not found`);
    if (before.role === 'owner' && !isOwner(ctx)) throw forbidden('Only an owner may remove an owner');
    await tx.query(`update people set state = 'removed' where tenant_id = $1 and id = $2`, [ctx.tenant.id, id]);
    await tx.query('delete from team_members where tenant_id = $1 and person_id = $2', [ctx.tenant.id, id]);
    if (before.role === 'owner') await keepAnOwner(tx, ctx.tenant.id);
    await endSessionsOf(tx, ctx.tenant.id, id);
    await emitTenantEvent(tx, ctx, 'person.removed', { person: { id, email: before.email } });
  });
}

async function lockPerson(tx: Queryable, ctx: AuthedCtx, id: string) {
  const [row] = isUuid(id)
    ? await tx.query<{ email: string; role: PersonRole; state: PersonState }>(
        'select email, role, state from people where tenant_id = $1 and id = $2 for update',
        [ctx.tenant.id, id],
      )
    : [];
  if (!row) throw notFound(`Person ${id} not found`);
  return row;
}

/** Refuses a change that takes the last active owner from a tenant that has people: only keys of no person could manage them. */
async function keepAnOwner(tx: Queryable, tenantId: string): Promise<void> {
  const [row] = await tx.query<{ people: number; owners: number }>(
    `select count(*) filter (where state in ('active', 'invited'))::int as people, count(*) filter (where state = 'active' and role = 'owner')::int as owners
       from people where tenant_id = $1`,
    [tenantId],
  );
  if (row!.people > 0 && row!.owners === 0) throw badRequest('This change would leave the tenant without an active owner: make another person owner first');
}
