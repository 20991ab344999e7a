import { rng } from '../lib/stats.ts';

/**
 * Synthetic but realistic memories: the one-to-three-sentence notes an agent keeps about people,
 * work and preferences, with categories, metadata and container tags (end users). Deterministic:
 * the same seed gives the same corpus, so runs compare.
 */
export const FIRST = [
  'Ana',
  'Ben',
  'Chloe',
  'Dmitri',
  'Elena',
  'Farid',
  'Grace',
  'Hiro',
  'Ines',
  'Jonas',
  'Kemi',
  'Liam',
  'Maya',
  'Nils',
  'Olga',
  'Priya',
  'Quentin',
  'Rosa',
  'Sami',
  'Tara',
  'Umar',
  'Vera',
  'Wen',
  'Xavier',
  'Yusuf',
  'Zoe',
  'Arjun',
  'Bea',
  'Carlos',
  'Dana',
];
export const LAST = [
  'Novak',
  'Okafor',
  'Silva',
  'Tanaka',
  'Schmidt',
  'Haddad',
  'Kowalski',
  'Moreau',
  'Lindqvist',
  'Reyes',
  'Ivanova',
  'Chen',
  'Patel',
  'Rossi',
  'Andersen',
  'Mbeki',
  'Kaur',
  'Dubois',
  'Yilmaz',
  'Costa',
];
export const CITIES = [
  'Lisbon',
  'Berlin',
  'Nairobi',
  'Osaka',
  'Toronto',
  'Lyon',
  'Austin',
  'Krakow',
  'Seoul',
  'Porto',
  'Denver',
  'Oslo',
  'Bogota',
  'Cairo',
  'Dublin',
  'Hanoi',
  'Lima',
  'Madrid',
  'Perth',
  'Zurich',
];
export const DRINKS = ['oat milk flat whites', 'green tea', 'espresso', 'sparkling water', 'chai', 'decaf coffee', 'matcha', 'herbal tea'];
const FOODS = ['vegetarian food', 'spicy ramen', 'gluten-free meals', 'sushi', 'Ethiopian food', 'tapas', 'vegan desserts', 'dim sum'];
export const HOBBIES = [
  'bouldering',
  'sourdough baking',
  'trail running',
  'chess',
  'pottery',
  'birdwatching',
  'salsa dancing',
  'sailing',
  'woodworking',
  'photography',
  'cycling',
  'playing the cello',
];
const PROJECTS = [
  'billing',
  'onboarding',
  'search',
  'mobile app',
  'data warehouse',
  'payments',
  'analytics dashboard',
  'CRM sync',
  'invoice export',
  'SSO rollout',
  'pricing page',
  'support portal',
];
const ARTIFACTS = ['roadmap', 'design doc', 'budget', 'launch plan', 'migration', 'security review', 'contract', 'postmortem'];
const ISSUES = [
  'expired TLS certificate',
  'memory leak',
  'slow database query',
  'misconfigured DNS record',
  'race condition',
  'full disk',
  'rate limit from the vendor',
  'bad feature flag',
];
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'next week', 'the end of the month', 'the end of the quarter'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const TOOLS = ['Slack', 'email', 'phone', 'video calls', 'short written summaries', 'async comments'];
const RELATIONS = ['sister', 'brother', 'manager', 'daughter', 'son', 'partner', 'cofounder', 'mentor'];

type R = ReturnType<typeof rng>;
const person = (r: R) => `${r.pick(FIRST)} ${r.pick(LAST)}`;

const TEMPLATES: Array<{ category: string; text: (r: R) => string }> = [
  { category: 'preference', text: (r) => `${person(r)} prefers ${r.pick(DRINKS)} in the morning and does not drink alcohol at team events.` },
  { category: 'preference', text: (r) => `${person(r)} likes ${r.pick(FOODS)}. Book a place in ${r.pick(CITIES)} that serves it for the offsite.` },
  { category: 'preference', text: (r) => `${person(r)} would rather be reached by ${r.pick(TOOLS)} than by ${r.pick(TOOLS)}, and never before 9am.` },
  { category: 'fact', text: (r) => `${person(r)} moved to ${r.pick(CITIES)} in ${r.pick(MONTHS)} and now works remotely for the ${r.pick(PROJECTS)} team.` },
  { category: 'fact', text: (r) => `${person(r)}'s ${r.pick(RELATIONS)} lives in ${r.pick(CITIES)}. They spend holidays there every ${r.pick(MONTHS)}.` },
  { category: 'fact', text: (r) => `${person(r)} owns the ${r.pick(PROJECTS)} ${r.pick(ARTIFACTS)} and signs off every change to it.` },
  { category: 'fact', text: (r) => `${person(r)} spends weekends ${r.pick(HOBBIES)}. Ask about it to break the ice.` },
  {
    category: 'episode',
    text: (r) => `Met ${person(r)} about the ${r.pick(PROJECTS)} ${r.pick(ARTIFACTS)}. We agreed to send a revised version by ${r.pick(DAYS)}.`,
  },
  {
    category: 'episode',
    text: (r) => `The ${r.pick(PROJECTS)} deploy failed because of a ${r.pick(ISSUES)}. ${person(r)} rolled it back and wrote the postmortem.`,
  },
  {
    category: 'episode',
    text: (r) =>
      `Call with ${person(r)} from ${r.pick(CITIES)}: they want the ${r.pick(PROJECTS)} ${r.pick(ARTIFACTS)} before ${r.pick(DAYS)}. Follow up by ${r.pick(TOOLS)}.`,
  },
  { category: 'other', text: (r) => `Reminder: renew the ${r.pick(PROJECTS)} ${r.pick(ARTIFACTS)} with ${person(r)} in ${r.pick(MONTHS)}.` },
  {
    category: 'decision',
    text: (r) => `Decision: the ${r.pick(PROJECTS)} team keeps the ${r.pick(ARTIFACTS)} in ${r.pick(CITIES)}; ${person(r)} has the final say.`,
  },
];

export const SOURCES = ['slack', 'email', 'meeting', 'crm', 'jira'];
export const N_USERS = 1000;
export const N_PROJECTS = 50;

export interface BenchMemory {
  text: string;
  category: string;
  importance: number;
  metadata: Record<string, unknown>;
  container_tag: string;
}

export function* memories(count: number, seed: number): Generator<BenchMemory> {
  const r = rng(seed);
  for (let i = 0; i < count; i++) {
    // 'decision' is the rare category (about 1 in 100), the rest are spread over the templates.
    const t = r.next() < 0.01 ? TEMPLATES[TEMPLATES.length - 1]! : TEMPLATES[r.int(TEMPLATES.length - 1)]!;
    yield {
      text: t.text(r),
      category: t.category,
      importance: Math.round(r.next() * 100) / 100,
      metadata: { source: r.pick(SOURCES), project: `p-${r.int(N_PROJECTS)}`, seq: i },
      container_tag: `user-${r.int(N_USERS)}`,
    };
  }
}

const QUESTIONS: Array<(r: R) => string> = [
  (r) => `what does ${r.pick(FIRST)} like to drink in the morning`,
  (r) => `who owns the ${r.pick(PROJECTS)} ${r.pick(ARTIFACTS)}`,
  (r) => `why did the ${r.pick(PROJECTS)} deploy fail`,
  (r) => `where does ${r.pick(FIRST)} ${r.pick(LAST)} live now`,
  (r) => `restaurant with ${r.pick(FOODS)} in ${r.pick(CITIES)}`,
  (r) => `how should I contact ${r.pick(FIRST)}`,
  (r) => `hobbies of ${r.pick(FIRST)} ${r.pick(LAST)} on weekends`,
  (r) => `deadline for the ${r.pick(ARTIFACTS)} agreed in the meeting`,
];

/** Distinct natural-language queries (distinct so the result cache never answers them). */
export function queries(count: number, seed: number): string[] {
  const r = rng(seed);
  const out = new Set<string>();
  while (out.size < count) out.add(r.pick(QUESTIONS)(r));
  return [...out];
}
