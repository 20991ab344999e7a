import { z } from 'zod';
import { timestamp } from './fields.ts';

/** People, teams and collection scopes (docs/people.md). Each list here is the one source of its values. */

/** What a person may do in the tenant: `owner` and `admin` manage people, teams and settings; `viewer` only reads. */
export const PERSON_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export const personRole = z.enum(PERSON_ROLES).describe('The person\'s role in the tenant (docs/people.md, "Roles")');
export type PersonRole = z.infer<typeof personRole>;

/** `invited`: may sign in once; `suspended`: signs in and acts no more until restored; `removed`: for good. */
export const PERSON_STATES = ['invited', 'active', 'suspended', 'removed'] as const;
export const personState = z.enum(PERSON_STATES);
export type PersonState = z.infer<typeof personState>;

export const TEAM_ROLES = ['admin', 'member'] as const;
export const teamRole = z.enum(TEAM_ROLES).describe("A team admin reviews what is proposed to the team's collections");

/** Who reads a collection besides its grants: the whole tenant, one person, or the people of some teams. */
export const COLLECTION_SCOPES = ['org', 'team', 'personal'] as const;
export const collectionScope = z.enum(COLLECTION_SCOPES).describe('Who may read the collection besides its grants (docs/people.md, "Scopes")');
export type CollectionScope = z.infer<typeof collectionScope>;

export const personSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    role: personRole,
    state: personState,
    teams: z.array(z.object({ id: z.string(), name: z.string(), role: teamRole })),
    created_at: timestamp,
    last_sign_in_at: timestamp.nullable(),
  })
  .openapi('Person');
export type Person = z.infer<typeof personSchema>;

export const teamSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    provider_group: z
      .string()
      .nullable()
      .describe("The provider's group this team follows (kept in sync at each sign-in), or null: its members are managed here"),
    members: z.array(z.object({ person_id: z.string(), email: z.string(), name: z.string(), role: teamRole, source: z.enum(['orgmem', 'provider']) })),
    created_at: timestamp,
  })
  .openapi('Team');
export type Team = z.infer<typeof teamSchema>;

/** A collection's scope as the API shows and takes it. */
export const scopeSchema = z
  .object({
    scope: collectionScope,
    owner: z.string().nullable().describe('The person a personal collection belongs to'),
    teams: z.array(z.string()).describe("The ids of a team collection's teams"),
  })
  .openapi('CollectionScope');

/** A collection's scope as a create or an update takes it (docs/people.md, "Scopes"). */
export const scopeInput = z.object({
  scope: collectionScope.optional(),
  owner: z.string().max(64).nullable().optional().describe("A personal collection's owner (a person id); the caller's own person when left out"),
  teams: z.array(z.string().max(64)).max(50).optional().describe("A team collection's teams (team ids)"),
});

/** A team as a create or an update takes it. */
export const teamInput = z.object({
  name: z.string().trim().min(1).max(100).optional(),
  provider_group: z.string().max(200).nullable().optional().describe("The provider's group (a value of its group claim) this team follows"),
});
