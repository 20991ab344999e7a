import { createRequire } from 'node:module';

/**
 * Turns a memory's text into the forms the steering rules read (steering.ts): one visible text
 * plus every piece a person would not see, each in NFKC with invisible characters removed and
 * look-alike letters mapped to Latin. Every step is a single scan or a regex without nested
 * unbounded repetition, and decoding is bounded in depth and size, so a 10 MB memory of NULs,
 * lone surrogates or one character repeated costs time in proportion to its length.
 */

/** The ways a text can keep what it says from a person reading it. */
export type Hiding =
  | 'invisible-characters'
  | 'bidi-controls'
  | 'tag-characters'
  | 'homoglyphs'
  | 'html-comment'
  | 'markdown-comment'
  | 'collapsed-section'
  | 'hidden-html'
  | 'base64'
  | 'hex'
  | 'percent-encoding'
  | 'html-entities';

export interface Segment {
  text: string;
  /** How this piece was hidden or disguised, outermost first; empty for plain visible text. */
  hiddenBy: Hiding[];
}

export interface Normalised {
  /** The visible text first, then each hidden or decoded piece. */
  segments: Segment[];
  /** Each kind of hiding found anywhere, once. */
  hiding: Hiding[];
}

/** Hidden inside hidden inside hidden is deep enough; past it the text is only cleaned. */
const MAX_DEPTH = 3;
/** Encoded characters read of one blob, examined over a whole memory, and decoded characters kept. */
const MAX_BLOB = 64 * 1024;
const MAX_EXAMINED = 4 * 1024 * 1024;
const MAX_DECODED = 256 * 1024;
/** Blobs tried in one piece: a memory of a million short tokens must not decode them all. */
const MAX_BLOBS = 256;

interface Walk {
  found: Set<Hiding>;
  /** Encoded characters still to examine, and decoded characters still to keep. */
  examineLeft: number;
  decodedLeft: number;
  segments: Segment[];
}

export function normalise(text: string): Normalised {
  const walk: Walk = { found: new Set(), examineLeft: MAX_EXAMINED, decodedLeft: MAX_DECODED, segments: [] };
  unveil(text, [], 0, walk);
  return { segments: walk.segments, hiding: [...walk.found] };
}

function unveil(raw: string, hiddenBy: Hiding[], depth: number, walk: Walk) {
  const structure = depth < MAX_DEPTH ? extractHidden(wellFormed(raw)) : { visible: wellFormed(raw), pieces: [] };
  const own: Hiding[] = [];
  let text = decodeEntities(structure.visible, own);
  const smuggled: Pieces = [];
  text = stripInvisible(text, own, smuggled).normalize('NFKC');
  text = mapLookAlikes(text, own);
  for (const kind of own) walk.found.add(kind);
  // Entity-encoded letters and the disguises above belong to this piece's own text; the carriers
  // it sits in come first.
  const here = withKinds(hiddenBy, own);
  walk.segments.push({ text, hiddenBy: here });
  for (const [kind, inner] of structure.pieces) {
    walk.found.add(kind);
    unveil(inner, withKinds(here, [kind]), depth + 1, walk);
  }
  for (const [kind, inner] of smuggled) unveil(inner, withKinds(here, [kind]), depth + 1, walk);
  if (depth < MAX_DEPTH) {
    for (const [kind, decoded, hides] of decodeBlobs(text, walk)) {
      if (hides) walk.found.add(kind);
      unveil(decoded, hides ? withKinds(here, [kind]) : here, depth + 1, walk);
    }
  }
}

const withKinds = (outer: Hiding[], more: Hiding[]) => [...outer, ...more.filter((k) => !outer.includes(k))];

/** Lone surrogates (half of an emoji cut off, or planted) become U+FFFD so NFKC and regexes see valid text. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const wellFormed = (s: string) => s.replace(LONE_SURROGATE, '\uFFFD');

// ---------------------------------------------------------------------------------------------
// Markup a renderer does not show: HTML comments, Markdown's comment idiom, collapsed sections and
// elements styled invisible. Each is cut out of the visible text and read as a piece of its own.

type Pieces = Array<[Hiding, string]>;

const COMMENT_OPEN = /<!--/g;
const COMMENT_CLOSE = /--!?>/g;
/** `[//]: # (text)`, `[comment]: <> (text)` and the like: a link definition nothing links to. */
const MD_COMMENT = /^[ \t]{0,3}\[[^\]\n]{0,64}\]:[ \t]*(?:#|<>)[ \t]+(.*)$/gm;
const DETAILS_OPEN = /<details\b[^>\n]{0,400}>/gi;
const DETAILS_CLOSE = /<\/details\s*>/gi;
/** An element styled invisible; void elements (an `<input hidden>`) hold no text and are skipped. */
const HIDDEN_OPEN =
  /<(?!(?:area|br|col|embed|hr|img|input|link|meta|source|track|wbr)\b)([a-z][a-z0-9]{0,10})\b[^>]{0,400}?(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d]*[1-9])|opacity\s*:\s*0(?![.\d]*[1-9])|\shidden(?=[\s>=/]))[^>]{0,400}>/gi;

function extractHidden(text: string): { visible: string; pieces: Pieces } {
  const pieces: Pieces = [];
  let visible = cut(text, COMMENT_OPEN, () => COMMENT_CLOSE, 'html-comment', pieces);
  visible = cut(visible, DETAILS_OPEN, () => DETAILS_CLOSE, 'collapsed-section', pieces);
  const closers = new Map<string, RegExp>();
  const closer = (m: RegExpExecArray) => {
    const tag = m[1]!.toLowerCase();
    if (!closers.has(tag)) closers.set(tag, new RegExp(`</${tag}\\s*>`, 'gi'));
    return closers.get(tag)!;
  };
  visible = cut(visible, HIDDEN_OPEN, closer, 'hidden-html', pieces);
  visible = visible.replace(MD_COMMENT, (_line, inner: string) => {
    pieces.push(['markdown-comment', inner]);
    return ' ';
  });
  return { visible, pieces: joinByKind(pieces) };
}

/**
 * Cuts every span from an opening match to its closing one; an unclosed span runs to the end, as
 * a browser hides an unclosed comment. Each search starts where the last one ended: linear.
 */
function cut(text: string, open: RegExp, closeFor: (m: RegExpExecArray) => RegExp, kind: Hiding, pieces: Pieces): string {
  const kept: string[] = [];
  let at = 0;
  open.lastIndex = 0;
  for (let m = open.exec(text); m; m = open.exec(text)) {
    const close = closeFor(m);
    close.lastIndex = open.lastIndex;
    const end = close.exec(text);
    kept.push(text.slice(at, m.index), ' ');
    pieces.push([kind, text.slice(open.lastIndex, end ? end.index : text.length)]);
    at = end ? close.lastIndex : text.length;
    open.lastIndex = at;
  }
  kept.push(text.slice(at));
  return kept.join('');
}

/** A memory of a million comments is read as one hidden piece per kind, not a million. */
function joinByKind(pieces: Pieces): Pieces {
  const byKind = new Map<Hiding, string[]>();
  for (const [kind, text] of pieces) {
    const texts = byKind.get(kind);
    if (texts) texts.push(text);
    else byKind.set(kind, [text]);
  }
  return [...byKind].map(([kind, texts]) => [kind, texts.join('\n')]);
}

// ---------------------------------------------------------------------------------------------
// Characters: HTML entities, invisible and control characters, Unicode tag characters.

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  colon: ':',
  sol: '/',
  period: '.',
  lpar: '(',
  rpar: ')',
  shy: '\u00AD',
  zwj: '\u200D',
  zwnj: '\u200C',
  zerowidthspace: '\u200B',
};
const ENTITY = /&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|([a-z]{2,16}));/gi;

/** Decodes entities in place, as a renderer shows them; letters spelled as entities are a disguise. */
function decodeEntities(text: string, own: Hiding[]): string {
  if (!text.includes('&')) return text;
  let disguised = false;
  const out = text.replace(ENTITY, (whole, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
    if (name !== undefined) {
      const char = NAMED[name.toLowerCase()];
      if (char === undefined) return whole;
      if (char.charCodeAt(0) > 0x7f) disguised = true;
      return char;
    }
    const code = dec !== undefined ? Number(dec) : parseInt(hex!, 16);
    if (code > 0x10ffff) return whole;
    const char = String.fromCodePoint(code);
    if (/[\p{L}\p{N}]/u.test(char) || isInvisible(code)) disguised = true;
    return char;
  });
  if (disguised) own.push('html-entities');
  return wellFormed(out);
}

/** Characters with no glyph: zero-width spaces and joiners, word joiners, BOM, soft hyphen, fillers. */
function isInvisible(c: number): boolean {
  return (
    (c >= 0x200b && c <= 0x200f) ||
    (c >= 0x2060 && c <= 0x2064) ||
    c === 0xfeff ||
    c === 0x00ad ||
    c === 0x034f ||
    c === 0x061c ||
    c === 0x180e ||
    c === 0x115f ||
    c === 0x1160 ||
    c === 0x17b4 ||
    c === 0x17b5 ||
    c === 0x3164 ||
    c === 0xffa0 ||
    (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x0b && c !== 0x0c) ||
    (c >= 0x7f && c <= 0x9f)
  );
}
const isBidiControl = (c: number) => (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
const isVariationSelector = (c: number) => (c >= 0xfe00 && c <= 0xfe0f) || (c >= 0xe0100 && c <= 0xe01ef);
/** Letters of the scripts the rules read: an invisible character between two of them splits a word. */
const SCRIPT_LETTER = /[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}\p{N}]/u;
const isWordChar = (c: number) =>
  (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || (c > 0x7f && SCRIPT_LETTER.test(String.fromCodePoint(c)));
/** The waving black flag: tag characters after it spell a subdivision flag (🏴 of Scotland), not text. */
const BLACK_FLAG = 0x1f3f4;

/**
 * Removes every character with no glyph. Flags them only where they split a word (ZWJ inside an
 * emoji and ZWNJ inside Persian are how those are written); bidi overrides are flagged anywhere.
 * Unicode tag characters (U+E0020–E007E mirror ASCII) are read out as smuggled text, and so are
 * runs of variation selectors, which can carry one byte each.
 */
function stripInvisible(text: string, own: Hiding[], smuggled: Pieces): string {
  if (!/[^\x09\x0a\x0d\x20-\x7e]/.test(text)) return text;
  const kept: string[] = [];
  let from = 0;
  let lastKept = -1;
  let tags = '';
  let flag = false;
  const bytes: number[] = [];
  const carried: string[] = [];
  let splitsWord = false;
  let bidi = false;
  const flushBytes = () => {
    // One selector picks an emoji's presentation; four or more in a row carry data.
    if (bytes.length >= 4) carried.push(Buffer.from(bytes).toString('utf8'));
    bytes.length = 0;
  };
  for (let i = 0; i < text.length;) {
    const c = text.codePointAt(i)!;
    const width = c > 0xffff ? 2 : 1;
    const tag = c >= 0xe0000 && c <= 0xe007f;
    const vs = isVariationSelector(c);
    if (tag || vs || isInvisible(c) || isBidiControl(c)) {
      kept.push(text.slice(from, i));
      if (tag) {
        if (!flag && c >= 0xe0020 && c <= 0xe007e) tags += String.fromCharCode(c - 0xe0000);
        if (c === 0xe007f) flag = false;
      } else if (vs) {
        bytes.push(c <= 0xfe0f ? c - 0xfe00 : c - 0xe0100 + 16);
      } else if (isBidiControl(c)) {
        bidi = true;
      } else if (!splitsWord && lastKept >= 0 && isWordChar(lastKept)) {
        const next = nextVisible(text, i + width);
        if (next >= 0 && isWordChar(next)) splitsWord = true;
      }
      i += width;
      from = i;
      continue;
    }
    if (bytes.length) flushBytes();
    flag = c === BLACK_FLAG;
    lastKept = c;
    i += width;
  }
  flushBytes();
  kept.push(text.slice(from));
  if (tags.trim()) {
    smuggled.push(['tag-characters', tags]);
    own.push('tag-characters');
  }
  if (carried.length) smuggled.push(['invisible-characters', carried.join('\n')]);
  if (splitsWord || carried.length) own.push('invisible-characters');
  if (bidi) own.push('bidi-controls');
  return kept.join('');
}

/** The next character that is not itself invisible, bounded so a run of a million costs one pass. */
function nextVisible(text: string, from: number): number {
  for (let i = from; i < text.length && i < from + 64;) {
    const c = text.codePointAt(i)!;
    if (!isInvisible(c) && !isBidiControl(c) && !isVariationSelector(c) && !(c >= 0xe0000 && c <= 0xe007f)) return c;
    i += c > 0xffff ? 2 : 1;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Look-alike letters. The table is Unicode's confusables list (UTS #39) as the unhomoglyph package
// keeps it; its own function is not used, because it computes the UTS #39 *skeleton*, which also
// rewrites plain Latin (m to "rn", I to "l", 0 to "O") and would break every rule below. Only its
// entries from a non-ASCII character to one printable ASCII character are taken.

const LOOK_ALIKES: Map<number, string> = (() => {
  const data = createRequire(import.meta.url)('unhomoglyph/data.json') as Record<string, string>;
  const map = new Map<number, string>();
  for (const [from, to] of Object.entries(data)) {
    const code = from.codePointAt(0)!;
    if (code < 0x80 || from.length !== (code > 0xffff ? 2 : 1) || !/^[\x21-\x7e]$/.test(to)) continue;
    // The skeleton writes capital I as l; a capital look-alike (Cyrillic І, Greek Ι) means I.
    map.set(code, to === 'l' && from !== from.toLowerCase() ? 'I' : to);
  }
  // Typographic quotes read as the ASCII ones the rules are written with ("don’t").
  for (const q of '\u2018\u2019\u201A\u201B\u2032') map.set(q.codePointAt(0)!, "'");
  for (const q of '\u201C\u201D\u201E\u201F\u2033') map.set(q.codePointAt(0)!, '"');
  return map;
})();

const WORD = /[\p{L}\p{M}\p{N}_]+/gu;
const QUOTES = /[\u2018\u2019\u201A\u201B\u2032\u201C\u201D\u201E\u201F\u2033]/g;

/**
 * Maps look-alikes inside words that also hold ASCII letters ("іgnоrе" with Cyrillic і and о),
 * and whole look-alike words in a mostly Latin text; a Russian or Greek text keeps its own letters.
 * Disguise is flagged for a mixed word of four or more letters, or for two mixed words: "μs" alone
 * is a unit, not a disguise.
 */
function mapLookAlikes(text: string, own: Hiding[]): string {
  if (!/[^\x00-\x7f]/.test(text)) return text;
  text = text.replace(QUOTES, (q) => LOOK_ALIKES.get(q.codePointAt(0)!)!);
  let ascii = 0;
  let other = 0;
  for (const m of text.matchAll(/[a-zA-Z]+|[^\x00-\x7f\s\p{P}\p{S}\p{N}]+/gu)) {
    if (m[0].charCodeAt(0) < 0x80) ascii += m[0].length;
    else other += m[0].length;
  }
  const latinText = ascii > other;
  let mixed = 0;
  let longMixed = false;
  const out = text.replace(WORD, (word) => {
    if (!/[^\x00-\x7f]/.test(word)) return word;
    let mapped = '';
    let hasAscii = false;
    let all = true;
    let mappedLetters = 0;
    for (const ch of word) {
      const code = ch.codePointAt(0)!;
      if (code < 0x80) {
        hasAscii ||= /[a-zA-Z]/.test(ch);
        mapped += ch;
        continue;
      }
      const to = LOOK_ALIKES.get(code);
      if (to === undefined) all = false;
      else if (/[a-zA-Z]/.test(to)) mappedLetters++;
      mapped += to ?? ch;
    }
    if (hasAscii && mappedLetters > 0) {
      mixed++;
      if ([...word].length >= 4) longMixed = true;
      return mapped;
    }
    return all && latinText && [...word].length >= 2 ? mapped : word;
  });
  if (longMixed || mixed >= 2) own.push('homoglyphs');
  return out;
}

// ---------------------------------------------------------------------------------------------
// Encoded blobs: base64 (and base64url), hex, percent-encoding. A blob is read when it decodes to
// mostly printable text; a git SHA or a random token decodes to bytes and is left alone.

// Bounded repetition: a blob longer than MAX_BLOB is read in pieces, and V8 needs no stack per character.
const BASE64 = /[A-Za-z0-9+/_-]{24,65536}={0,2}/g;
const HEX = /(?:[0-9a-fA-F]{2}){12,32768}|(?:\\x[0-9a-fA-F]{2}){8,16384}/g;
const PERCENT = /(?:%[0-9a-fA-F]{2}[^\s%]{0,64}){3,16384}/g;

/**
 * The decoded blobs of a text, joined per kind and per whether the encoding hid them (a URL's
 * percent-encoded spaces do not): a memory of ten thousand tokens yields a few pieces.
 */
function decodeBlobs(text: string, walk: Walk): Array<[Hiding, string, boolean]> {
  const out: Array<[Hiding, string, boolean]> = [];
  const take = (kind: Hiding, re: RegExp, decode: (blob: string) => [string, boolean] | null) => {
    const hidden: string[] = [];
    const shown: string[] = [];
    let tried = 0;
    re.lastIndex = 0;
    for (let m = re.exec(text); m && tried < MAX_BLOBS && walk.examineLeft > 0 && walk.decodedLeft > 0; m = re.exec(text)) {
      tried++;
      const blob = m[0].slice(0, MAX_BLOB);
      walk.examineLeft -= blob.length;
      const decoded = decode(blob);
      if (!decoded) continue;
      walk.decodedLeft -= decoded[0].length;
      (decoded[1] ? hidden : shown).push(decoded[0]);
    }
    if (hidden.length) out.push([kind, hidden.join('\n'), true]);
    if (shown.length) out.push([kind, shown.join('\n'), false]);
  };
  take('base64', BASE64, (blob) => {
    if (/^[0-9a-fA-F]+$/.test(blob)) return null;
    const text = readable(Buffer.from(blob, 'base64'));
    return text === null ? null : [text, true];
  });
  take('hex', HEX, (blob) => {
    const text = readable(Buffer.from(blob.replace(/\\x/g, ''), 'hex'));
    return text === null ? null : [text, true];
  });
  take('percent-encoding', PERCENT, (blob) => {
    let letters = 0;
    const bytes: number[] = [];
    for (let i = 0; i < blob.length; i++) {
      const code = blob[i] === '%' ? parseInt(blob.slice(i + 1, i + 3), 16) : NaN;
      if (!Number.isNaN(code) && /^[0-9a-fA-F]{2}$/.test(blob.slice(i + 1, i + 3))) {
        if ((code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) letters++;
        bytes.push(code);
        i += 2;
      } else bytes.push(...Buffer.from(blob[i] === '+' ? ' ' : blob[i]!));
    }
    const text = readable(Buffer.from(bytes));
    // Letters have no reason to be percent-encoded; a URL encodes spaces and punctuation.
    return text === null ? null : [text, letters >= 3];
  });
  return out;
}

/**
 * The bytes as UTF-8 text when at least 90% of its visible characters are printable, else null;
 * format characters (zero-width, tags) are left out of the count, the next unveil reads them.
 */
function readable(bytes: Buffer): string | null {
  if (bytes.length < 8) return null;
  const text = bytes.toString('utf8');
  let printable = 0;
  let counted = 0;
  for (const ch of text) {
    if (/\p{Cf}/u.test(ch)) continue;
    counted++;
    if (/[\p{L}\p{N}\p{P}\p{S}\s]/u.test(ch) && ch !== '\uFFFD') printable++;
  }
  return counted >= 8 && printable >= 0.9 * counted ? text : null;
}
