import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { col, rememberSync } from './support/graph.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * The contradiction suite: each case seeds a collection (similar-looking distractor facts plus the
 * case's own facts), remembers a new text, and checks every resulting fact's relation and exactly
 * which facts were superseded. The fake LLM plays an oracle judge (test/fakes/memory-llm.ts) that
 * can only choose among the similar facts the service retrieved and sent, so a case passes only if
 * neighbour retrieval surfaced the right fact and the service applied the verdict correctly.
 */
interface Case {
  name: string;
  seed: string[];
  then: string;
  /** Each fact of `then`: its relation and, for supersedes, the seed fact it replaces. */
  expect: Array<[fact: string, relation: 'new' | 'duplicate' | 'supersedes', replaces?: string]>;
}

const DISTRACTORS = [
  'Zoe lives in Paris.',
  'Yuri lives in Moscow.',
  "Walt's office is in Boston.",
  'Xena prefers tea in the evening.',
  'Vera likes window seats on trains.',
  "Uma's favourite colour is red.",
  "The supplier's name is Acme Ltd.",
  "Tom's cat is named Tiger.",
  'Sara works at Microsoft.',
  "Rick's phone number is 555-0000.",
  'The office meets in room 2C.',
  'The budget review is in April.',
];

const CASES: Case[] = [
  // Moved cities and places
  {
    name: 'moved city',
    seed: ['Ana lives in Lisbon.', 'Ana works as a nurse.', "Ana's sister lives in Madrid."],
    then: 'Ana lives in Berlin.',
    expect: [['Ana lives in Berlin.', 'supersedes', 'Ana lives in Lisbon.']],
  },
  {
    name: 'office moved',
    seed: ["Ben's office is in Chicago.", 'Ben has two cats.', 'Ben drives a Volvo.'],
    then: "Ben's office is in Denver.",
    expect: [["Ben's office is in Denver.", 'supersedes', "Ben's office is in Chicago."]],
  },
  {
    name: 'relocated base',
    seed: ['Carla is based in Tokyo.', 'Carla studied physics.', "Carla's manager is Ken."],
    then: 'Carla is based in Osaka.',
    expect: [['Carla is based in Osaka.', 'supersedes', 'Carla is based in Tokyo.']],
  },
  {
    name: 'meeting room changed',
    seed: ['The team meets in room 4B.', 'The team uses Jira.', 'The team lead is Priya.'],
    then: 'The team meets in room 7A.',
    expect: [['The team meets in room 7A.', 'supersedes', 'The team meets in room 4B.']],
  },
  // Changed preferences
  {
    name: 'tea to coffee',
    seed: ['Dan prefers tea in the morning.', 'Dan plays tennis.', "Dan's birthday is in May."],
    then: 'Dan prefers coffee in the morning.',
    expect: [['Dan prefers coffee in the morning.', 'supersedes', 'Dan prefers tea in the morning.']],
  },
  {
    name: 'window to aisle',
    seed: ['Eva likes window seats on flights.', 'Eva flies with Lufthansa.', 'Eva is vegetarian.'],
    then: 'Eva likes aisle seats on flights.',
    expect: [['Eva likes aisle seats on flights.', 'supersedes', 'Eva likes window seats on flights.']],
  },
  {
    name: 'dark to light mode',
    seed: ['Finn prefers dark mode in editors.', 'Finn uses Vim.', 'Finn codes in Rust.'],
    then: 'Finn prefers light mode in editors.',
    expect: [['Finn prefers light mode in editors.', 'supersedes', 'Finn prefers dark mode in editors.']],
  },
  {
    name: 'favourite colour',
    seed: ["Gia's favourite colour is blue.", 'Gia paints on weekends.', 'Gia owns a bakery.'],
    then: "Gia's favourite colour is green.",
    expect: [["Gia's favourite colour is green.", 'supersedes', "Gia's favourite colour is blue."]],
  },
  // Corrected names
  {
    name: 'client name corrected',
    seed: ["The client's name is Jon Smith.", 'The client is based in Leeds.', 'The contract renews in June.'],
    then: "The client's name is John Smyth.",
    expect: [["The client's name is John Smyth.", 'supersedes', "The client's name is Jon Smith."]],
  },
  {
    name: 'husband name corrected',
    seed: ["Hana's husband is called Marco.", 'Hana teaches maths.', 'Hana runs marathons.'],
    then: "Hana's husband is called Mario.",
    expect: [["Hana's husband is called Mario.", 'supersedes', "Hana's husband is called Marco."]],
  },
  {
    name: 'project renamed',
    seed: ['The project is called Apollo.', 'The project deadline is March.', 'The project budget is 2 million.'],
    then: 'The project is called Artemis.',
    expect: [['The project is called Artemis.', 'supersedes', 'The project is called Apollo.']],
  },
  {
    name: 'dog name corrected',
    seed: ["Ivan's dog is named Rex.", 'Ivan lives on a farm.', 'Ivan grows apples.'],
    then: "Ivan's dog is named Max.",
    expect: [["Ivan's dog is named Max.", 'supersedes', "Ivan's dog is named Rex."]],
  },
  // Other changes: the right one of several similar facts
  {
    name: 'new employer',
    seed: ['Jade works at Google.', 'Jade lives in Dublin.', 'Jade likes hiking.'],
    then: 'Jade works at Stripe.',
    expect: [['Jade works at Stripe.', 'supersedes', 'Jade works at Google.']],
  },
  {
    name: 'phone, not email',
    seed: ["Kai's phone number is 555-0101.", "Kai's email is kai@example.com.", 'Kai likes sushi.'],
    then: "Kai's phone number is 555-0199.",
    expect: [["Kai's phone number is 555-0199.", 'supersedes', "Kai's phone number is 555-0101."]],
  },
  // Unrelated or merely related facts: nothing superseded
  {
    name: 'related, not contradicting',
    seed: ['Leo lives in Rome.', 'Leo is a chef.'],
    then: "Leo's brother lives in Naples.",
    expect: [["Leo's brother lives in Naples.", 'new']],
  },
  { name: 'a second liking', seed: ['Mia likes cats.', 'Mia has a garden.'], then: 'Mia likes dogs.', expect: [['Mia likes dogs.', 'new']] },
  {
    name: 'a second language',
    seed: ['Noah speaks French.', 'Noah lives in Quebec.'],
    then: 'Noah speaks Spanish.',
    expect: [['Noah speaks Spanish.', 'new']],
  },
  {
    name: 'an unrelated episode',
    seed: ['Olga plays the piano.', 'Olga works as an engineer.'],
    then: 'Last summer Olga visited Paris.',
    expect: [['Last summer Olga visited Paris.', 'new']],
  },
  // Duplicates: stored once
  {
    name: 'exact duplicate',
    seed: ['Pia lives in Vienna.', 'Pia is a lawyer.'],
    then: 'Pia lives in Vienna.',
    expect: [['Pia lives in Vienna.', 'duplicate']],
  },
  {
    name: 'duplicate with other case and punctuation',
    seed: ['Quinn prefers email over calls.', 'Quinn works remotely.'],
    then: 'quinn prefers EMAIL over calls!',
    expect: [['quinn prefers EMAIL over calls!', 'duplicate']],
  },
  // Mixed
  {
    name: 'one text, three relations',
    seed: ['Rosa lives in Seville.', 'Rosa likes flamenco.', 'Rosa works at a bank.'],
    then: 'Rosa lives in Granada. Rosa likes flamenco. Rosa adopted a cat.',
    expect: [
      ['Rosa lives in Granada.', 'supersedes', 'Rosa lives in Seville.'],
      ['Rosa likes flamenco.', 'duplicate'],
      ['Rosa adopted a cat.', 'new'],
    ],
  },
  {
    name: 'two changes in one text',
    seed: ['Tara lives in Cork.', 'Tara drives a Fiat.', 'Tara likes rugby.'],
    then: 'Tara lives in Galway. Tara drives a Tesla.',
    expect: [
      ['Tara lives in Galway.', 'supersedes', 'Tara lives in Cork.'],
      ['Tara drives a Tesla.', 'supersedes', 'Tara drives a Fiat.'],
    ],
  },
  {
    name: 'a chain: only the current fact is replaced',
    seed: ['Sam lives in York.', 'Sam lives in Bath.'],
    then: 'Sam lives in Leeds.',
    expect: [['Sam lives in Leeds.', 'supersedes', 'Sam lives in Bath.']],
  },
];

let fake: FakeLlm;
let server: TestServer;
let t: Tenant;
const passed: string[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  const model = playMemoryModel(fake);
  for (const c of CASES) for (const [fact, relation, old] of c.expect) if (relation === 'supersedes') model.replaces(fact, old!);
  // The chain's middle step: Bath replaces York while seeding.
  model.replaces('Sam lives in Bath.', 'Sam lives in York.');
  server = await startServer({ ORGMEM_LLM_BASE_URL: fake.url, ORGMEM_LLM_MODEL: 'fake-model' });
  t = await newTenant(server.url, server.adminKey);
});
afterAll(async () => {
  console.log(`contradiction suite: ${passed.length}/${CASES.length} cases passed`);
  await server?.close();
  await fake?.close();
});

describe('contradiction suite', () => {
  it('has at least 20 cases', () => expect(CASES.length).toBeGreaterThanOrEqual(20));

  for (const [n, c] of CASES.entries()) {
    it(c.name, async () => {
      const collection = `case-${n}`;
      const bulk = await t.api(
        'POST',
        `${col(collection)}/memories/bulk`,
        DISTRACTORS.map((text) => ({ text, category: 'fact' })),
      );
      expect(bulk.status).toBe(201);
      // Seed facts one remember at a time, so a chain can build up.
      const seeded = new Map<string, string>();
      for (const s of c.seed) {
        const r = await rememberSync(t, collection, s);
        expect(r.status).toBe(200);
        seeded.set(s, r.body.memories[0].id);
      }
      const res = await rememberSync(t, collection, c.then);
      expect(res.status).toBe(200);
      expect(res.body.memories.map((m: any) => [m.text, m.relation])).toEqual(c.expect.map(([f, r]) => [f, r]));
      for (const [i, [, relation, old]] of c.expect.entries()) {
        const m = res.body.memories[i];
        if (relation === 'supersedes') expect(m.supersedes_id).toBe(seeded.get(old!));
        else expect(m.supersedes_id).toBeUndefined();
        if (relation === 'duplicate') expect([...seeded.values()]).toContain(m.id);
      }
      expect(res.body.created).toBe(c.expect.filter(([, r]) => r !== 'duplicate').length);

      // Exactly the expected facts are superseded, and no fact text is stored twice.
      const pairs = (await t.api('GET', `${col(collection)}/contradictions`)).body as any[];
      const expected = c.expect.filter(([, r]) => r === 'supersedes').map(([f, , old]) => [f, old]);
      if (c.name.startsWith('a chain')) expected.push(['Sam lives in Bath.', 'Sam lives in York.']);
      expect(pairs.map((p) => [p.current.text, p.superseded.text]).sort()).toEqual(expected.sort());
      const facts = ((await t.api('GET', `${col(collection)}/memories?limit=200`)).body as any[]).map((m) => m.text.toLowerCase().replace(/[^a-z0-9]+/g, ' '));
      expect(new Set(facts).size).toBe(facts.length);
      passed.push(c.name);
    });
  }
});
