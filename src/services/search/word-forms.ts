import type { App } from '../../core/context.ts';
import type { Scope } from './scope.ts';

/**
 * English words whose forms PostgreSQL's `english` configuration does not bring to one lexeme:
 * irregular verbs (base, past, past participle) and irregular plurals. Its stemmer joins
 * "painted" and "paint", never "went" and "go"; a question asks "did she go", the memory says
 * "she went". Only groups whose forms give more than one lexeme are listed.
 */
const IRREGULAR_VERBS = [
  'arise arose arisen',
  'awake awoke awoken',
  'bear bore borne',
  'beat beat beaten',
  'become became become',
  'begin began begun',
  'bend bent bent',
  'bind bound bound',
  'bite bit bitten',
  'bleed bled bled',
  'blow blew blown',
  'break broke broken',
  'breed bred bred',
  'bring brought brought',
  'build built built',
  'burn burnt burnt',
  'buy bought bought',
  'catch caught caught',
  'choose chose chosen',
  'cling clung clung',
  'come came come',
  'creep crept crept',
  'deal dealt dealt',
  'dig dug dug',
  'draw drew drawn',
  'dream dreamt dreamt',
  'drink drank drunk',
  'drive drove driven',
  'eat ate eaten',
  'fall fell fallen',
  'feed fed fed',
  'feel felt felt',
  'fight fought fought',
  'find found found',
  'flee fled fled',
  'fly flew flown',
  'forbid forbade forbidden',
  'forget forgot forgotten',
  'forgive forgave forgiven',
  'freeze froze frozen',
  'get got gotten',
  'give gave given',
  'go went gone',
  'grind ground ground',
  'grow grew grown',
  'hang hung hung',
  'hear heard heard',
  'hide hid hidden',
  'hold held held',
  'keep kept kept',
  'kneel knelt knelt',
  'know knew known',
  'lay laid laid',
  'lead led led',
  'lean leant leant',
  'leap leapt leapt',
  'learn learnt learnt',
  'leave left left',
  'lend lent lent',
  'lie lay lain',
  'light lit lit',
  'lose lost lost',
  'make made made',
  'mean meant meant',
  'meet met met',
  'pay paid paid',
  'ride rode ridden',
  'ring rang rung',
  'rise rose risen',
  'run ran run',
  'say said said',
  'see saw seen',
  'seek sought sought',
  'sell sold sold',
  'send sent sent',
  'shake shook shaken',
  'shine shone shone',
  'shoot shot shot',
  'show showed shown',
  'shrink shrank shrunk',
  'sing sang sung',
  'sink sank sunk',
  'sit sat sat',
  'sleep slept slept',
  'slide slid slid',
  'speak spoke spoken',
  'speed sped sped',
  'spend spent spent',
  'spin spun spun',
  'spring sprang sprung',
  'stand stood stood',
  'steal stole stolen',
  'stick stuck stuck',
  'sting stung stung',
  'stink stank stunk',
  'strike struck struck',
  'swear swore sworn',
  'sweep swept swept',
  'swim swam swum',
  'swing swung swung',
  'take took taken',
  'teach taught taught',
  'tear tore torn',
  'tell told told',
  'think thought thought',
  'throw threw thrown',
  'understand understood understood',
  'wake woke woken',
  'wear wore worn',
  'weep wept wept',
  'win won won',
  'wind wound wound',
  'write wrote written',
];
const IRREGULAR_PLURALS = ['child children', 'person people', 'man men', 'woman women', 'mouse mice', 'foot feet', 'tooth teeth', 'goose geese'];

/**
 * The weight of another form of a query word, against 1 for the word as asked: chosen on LoCoMo's
 * conversations 0 to 4 among 0.3, 0.5, 0.7 and 1 (bench/README.md, "Second hop: what was tried").
 */
const FORM_WEIGHT = 0.3;

// Lexemes of the lists, per App (its database's configuration stems them): one statement on first use.
const perApp = new WeakMap<App, Promise<Map<string, string[]>>>();

/** Each listed lexeme's other forms' lexemes. */
function formsOf(app: App): Promise<Map<string, string[]>> {
  let forms = perApp.get(app);
  if (!forms) {
    const groups = [...IRREGULAR_VERBS, ...IRREGULAR_PLURALS].map((g) => g.split(' '));
    forms = app.db
      .query<{ g: number; lexemes: string[] }>(
        `select g, array_agg(distinct l) as lexemes from unnest($1::text[], $2::int[]) as w(word, g), unnest(search_lexemes(w.word)) l group by g`,
        [groups.flat(), groups.flatMap((words, g) => words.map(() => g))],
      )
      .then((rows) => {
        const out = new Map<string, string[]>();
        for (const { lexemes } of rows) {
          for (const l of lexemes) out.set(l, [...new Set([...(out.get(l) ?? []), ...lexemes.filter((o) => o !== l)])]);
        }
        return out;
      });
    // A failed read is tried again by the next search, not remembered.
    forms.catch(() => perApp.delete(app));
    perApp.set(app, forms);
  }
  return forms;
}

/**
 * The query's lexemes plus the other forms of its irregular words at FORM_WEIGHT (a word the
 * query holds in two forms keeps its own weight). Hybrid search only: text mode stays literal.
 * Only in scopes whose every full-text match is ranked (no more memories than the text cap,
 * text.ts): a larger scope's text side ranks a sample of the newest matches, which a common form
 * ("met" for "meeting", in 9% of the search bench's memories) would crowd with memories that
 * hold nothing else of the query.
 */
export async function withWordForms(app: App, scope: Pick<Scope, 'memoryCount'>, weights: Map<string, number>): Promise<Map<string, number>> {
  if (!weights.size || scope.memoryCount > app.config.search.textRankCap) return weights;
  const forms = await formsOf(app);
  const out = new Map(weights);
  for (const [l, w] of weights) for (const other of forms.get(l) ?? []) if (!out.has(other)) out.set(other, w * FORM_WEIGHT);
  return out;
}
