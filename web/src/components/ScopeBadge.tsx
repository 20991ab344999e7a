import type { ApiOutput } from '../api.ts';
import { SCOPE_NAMES, type TenantPerson, type TenantTeam } from './PeopleNames.ts';

type Scoped = Pick<ApiOutput['collections']['list'][number], 'scope' | 'owner' | 'teams'>;

/** Who reads a collection besides its grants (docs/people.md, "Scopes"): org, its teams by name, or its owner. */
export function ScopeBadge({ collection, people, teams }: { collection: Scoped; people?: TenantPerson[]; teams?: TenantTeam[] }) {
  const { scope, owner, teams: teamIds } = collection;
  let text: string = scope;
  if (scope === 'team') {
    const names = teamIds.map((id) => teams?.find((t) => t.id === id)?.name ?? id);
    text = `team: ${names.join(', ') || 'none'}`;
  } else if (scope === 'personal') {
    const person = people?.find((p) => p.id === owner);
    text = `personal: ${person?.email ?? owner ?? 'nobody'}`;
  }
  return (
    <span className="badge scope" title={SCOPE_NAMES[scope]}>
      {text}
    </span>
  );
}
