import type { CollectionScope, PersonRole, PersonState, Team } from '../../../src/schemas/people.ts';
import type { ApiOutput } from '../api.ts';

/** The people pages' API shapes, as the service's router answers them (types only). */
export type TenantPerson = ApiOutput['people']['list'][number];
export type TenantTeam = ApiOutput['teams']['list'][number];
export type TeamRole = Team['members'][number]['role'];

/**
 * The words for src/schemas/people.ts's lists (PERSON_ROLES, PERSON_STATES, TEAM_ROLES,
 * COLLECTION_SCOPES), keyed by the API's own types: a value the service adds fails the dashboard's
 * type check until it is named here (web/ may import only types from src/schemas/, so each list
 * below is read from these keys, as in TrustNames.ts).
 */
export const ROLE_NAMES: Record<PersonRole, string> = {
  owner: 'owner: everything, including other owners',
  admin: 'admin: people, teams, keys, grants and settings',
  member: 'member: reads and writes what their scopes and grants allow',
  viewer: 'viewer: only reads',
};
export const PERSON_ROLE_CHOICES = Object.keys(ROLE_NAMES) as PersonRole[];

export const STATE_NAMES: Record<PersonState, string> = {
  invited: 'invited',
  active: 'active',
  suspended: 'suspended',
  removed: 'removed',
};

export const TEAM_ROLE_NAMES: Record<TeamRole, string> = {
  admin: 'team admin',
  member: 'member',
};
export const TEAM_ROLE_CHOICES = Object.keys(TEAM_ROLE_NAMES) as TeamRole[];

export const SCOPE_NAMES: Record<CollectionScope, string> = {
  org: 'organization: every person of the tenant',
  team: 'team: the people of its teams',
  personal: 'personal: one person',
};
export const SCOPE_CHOICES = Object.keys(SCOPE_NAMES) as CollectionScope[];
