import type { AuthedCtx } from '../../core/context.ts';
import { badRequest, forbidden, notFound } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import type { CollectionScope } from '../../schemas/people.ts';
import type { ScopeColumns } from '../memory/collections.ts';

export interface ScopeInput {
  scope?: CollectionScope;
  /** A personal collection's owner; the caller's person when omitted. */
  owner?: string | null;
  /** A team collection's teams. */
  teams?: string[];
}

/**
 * The stored scope of a collection created or changed with `input`, checked: a personal collection
 * belongs to an active person (the caller's own unless an admin names another), a team collection
 * to one or more teams of the tenant that the caller is in (an admin: any). An `org` collection
 * is everyone's, as every collection was before people. Undefined when `input` names no scope.
 * Changing the scope of an existing collection (`change`) is an admin's: it decides who reads
 * what others wrote there.
 */
export async function checkedScope(ctx: AuthedCtx, input: ScopeInput, change = false): Promise<ScopeColumns | undefined> {
  if (input.scope === undefined) {
    if (input.owner != null || input.teams?.length) throw badRequest('owner and teams go with a scope: "personal" takes an owner, "team" takes teams');
    return undefined;
  }
  const admin = ctx.agent.role === 'admin';
  if (change && !admin) throw forbidden("Only an admin changes a collection's scope");
  const me = ctx.agent.for;
  if (input.scope === 'org') {
    if (input.owner != null || input.teams?.length) throw badRequest('An org collection has no owner and no teams');
    return { scope: 'org', owner_person_id: null, teams: [] };
  }
  if (input.scope === 'personal') {
    if (input.teams?.length) throw badRequest('A personal collection has no teams');
    const owner = input.owner ?? me?.id;
    if (!owner) throw badRequest('A personal collection belongs to a person: this key acts for none, so name the owner (a person id)');
    if (owner !== me?.id && !admin) throw forbidden('Only an admin makes a collection personal to someone else');
    const [person] = isUuid(owner)
      ? await ctx.app.platform.query(`select 1 from people where tenant_id = $1 and id = $2 and state in ('active', 'invited')`, [ctx.tenant.id, owner])
      : [];
    if (!person) throw notFound(`Person ${owner} not found among the tenant's people`);
    return { scope: 'personal', owner_person_id: owner, teams: [] };
  }
  if (input.owner != null) throw badRequest('A team collection has no owner: it belongs to its teams');
  const teams = [...new Set(input.teams ?? [])];
  if (!teams.length) throw badRequest('A team collection names one or more teams (teams: [team id, ...])');
  const found = await ctx.app.platform.query<{ id: string }>('select id from teams where tenant_id = $1 and id = any($2::uuid[])', [
    ctx.tenant.id,
    teams.filter(isUuid),
  ]);
  const missing = teams.find((t) => !found.some((f) => f.id === t));
  if (missing) throw notFound(`Team ${missing} not found among the tenant's teams`);
  if (!admin && !teams.some((t) => me?.teams.includes(t))) throw forbidden('A team collection must name a team you are in (an admin may name any)');
  return { scope: 'team', owner_person_id: null, teams };
}
