import type { ApiOutput } from '../api.ts';

/** The account pages' API shapes, as the service's router answers them (types only). */
export type AccountKey = ApiOutput['keys']['list'][number];
export type AccountAgent = ApiOutput['agents']['list'][number];
export type AccountGrants = ApiOutput['grants']['list'];
export type AccountGrant = AccountGrants['grants'][number];
