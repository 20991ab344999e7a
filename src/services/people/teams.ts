import type { AuthedCtx } from '../../core/context.ts';
import { conflict, forbidden, notFound } from '../../core/errors.ts';
import { iso, isUuid, newId } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import type { Team } from '../../schemas/people.ts';

/**
 * Teams (docs/people.md, "Teams"): made here, or following a group of the provider
 * (`provider_group`), whose members are kept in sync at each sign-in (provision.ts). A team admin
 * manages its members and reviews what is proposed to its collections.
 */

interface TeamRow {
  id: string;
  name: string;
  provider_group: string | null;
  created_at: Date;
  members: Team['members'];
}

const SELECT = `select t.id, t.name, t.provider_group, t.created_at,
    coalesce((select json_agg(json_build_object('person_id', p.id, 'email', p.email, 'name', p.name, 'role', m.role, 'source', m.source) order by lower(p.email))
                from team_members m join people p on p.tenant_id = m.tenant_id and p.id = m.person_id
               where m.tenant_id = t.tenant_id and m.team_id = t.id), '[]') as members
  from teams t`;

const view = (r: TeamRow): Team => ({ id: r.id, name: r.name, provider_group: r.provider_group, members: r.members, created_at: iso(r.created_at)! });

export async function listTeams(ctx: AuthedCtx): Promise<Team[]> {
  const rows = await ctx.app.platform.query<TeamRow>(`${SELECT} where t.tenant_id = $1 order by lower(t.name)`, [ctx.tenant.id]);
  return rows.map(view);
}

export async function getTeam(q: Queryable, tenantId: string, id: string): Promise<Team> {
  const [row] = isUuid(id) ? await q.query<TeamRow>(`${SELECT} where t.tenant_id = $1 and t.id = $2`, [tenantId, id]) : [];
  if (!row) throw notFound(`Team ${id} not found`);
  return view(row);
}

/** The unique indexes' violations as the API's 409, naming which (read back: Citus names a shard's index, not ours). */
async function uniquely<T>(ctx: AuthedCtx, id: string | null, name: string, group: string | null | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if ((err as { code?: string }).code !== '23505') throw err;
    const [taken] = group
      ? await ctx.app.platform.query('select 1 from teams where tenant_id = $1 and provider_group = $2 and id is distinct from $3::uuid', [
          ctx.tenant.id,
          group,
          id,
        ])
      : [];
    throw conflict(taken ? `A team already follows the provider group "${group}"` : `A team named "${name}" exists`);
  }
}

export async function createTeam(ctx: AuthedCtx, input: { name: string; provider_group?: string | null }): Promise<Team> {
  const id = newId();
  await uniquely(ctx, null, input.name, input.provider_group, () =>
    ctx.app.platform.query('insert into teams (tenant_id, id, name, provider_group) values ($1, $2, $3, $4)', [
      ctx.tenant.id,
      id,
      input.name,
      input.provider_group ?? null,
    ]),
  );
  return getTeam(ctx.app.platform, ctx.tenant.id, id);
}

export async function updateTeam(ctx: AuthedCtx, id: string, input: { name?: string; provider_group?: string | null }): Promise<Team> {
  const team = await getTeam(ctx.app.platform, ctx.tenant.id, id);
  await uniquely(ctx, id, input.name ?? team.name, input.provider_group, () =>
    ctx.app.platform.query(
      `update teams set name = coalesce($3, name), provider_group = case when $4 then $5 else provider_group end where tenant_id = $1 and id = $2`,
      [ctx.tenant.id, id, input.name ?? null, input.provider_group !== undefined, input.provider_group ?? null],
    ),
  );
  return getTeam(ctx.app.platform, ctx.tenant.id, id);
}

/** Deletes a team and its memberships; team collections that named only it are readable by no one but through their grants. */
export async function deleteTeam(ctx: AuthedCtx, id: string): Promise<void> {
  const rows = isUuid(id) ? await ctx.app.platform.query('delete from teams where tenant_id = $1 and id = $2 returning id', [ctx.tenant.id, id]) : [];
  if (!rows.length) throw notFound(`Team ${id} not found`);
}

/** Whether the caller manages the team's members: a tenant admin (or a key of no person), or an admin of that team. */
function managesTeam(ctx: AuthedCtx, team: Team): boolean {
  if (ctx.agent.role === 'admin') return true;
  const person = ctx.agent.for;
  return !!person && team.members.some((m) => m.person_id === person.id && m.role === 'admin');
}

/** Adds a person to a team or changes their team role; the person must be an active or invited person of the tenant. */
export async function putTeamMember(ctx: AuthedCtx, teamId: string, personId: string, input: { role: 'admin' | 'member' }): Promise<Team> {
  const team = await getTeam(ctx.app.platform, ctx.tenant.id, teamId);
  if (!managesTeam(ctx, team)) throw forbidden(`Only an admin of the tenant or of team "${team.name}" manages its members`);
  const [person] = isUuid(personId)
    ? await ctx.app.platform.query(`select 1 from people where tenant_id = $1 and id = $2 and state in ('active', 'invited')`, [ctx.tenant.id, personId])
    : [];
  if (!person) throw notFound(`Person ${personId} not found among the tenant's active and invited people`);
  await ctx.app.platform.query(
    `insert into team_members (tenant_id, team_id, person_id, role) values ($1, $2, $3, $4)
     on conflict (tenant_id, team_id, person_id) do update set role = excluded.role`,
    [ctx.tenant.id, teamId, personId, input.role],
  );
  return getTeam(ctx.app.platform, ctx.tenant.id, teamId);
}

export async function deleteTeamMember(ctx: AuthedCtx, teamId: string, personId: string): Promise<void> {
  const team = await getTeam(ctx.app.platform, ctx.tenant.id, teamId);
  if (!managesTeam(ctx, team)) throw forbidden(`Only an admin of the tenant or of team "${team.name}" manages its members`);
  const rows = isUuid(personId)
    ? await ctx.app.platform.query('delete from team_members where tenant_id = $1 and team_id = $2 and person_id = $3 returning person_id', [
        ctx.tenant.id,
        teamId,
        personId,
      ])
    : [];
  if (!rows.length) throw notFound(`Person ${personId} is not in team "${team.name}"`);
}
