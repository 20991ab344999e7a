import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * The repository carries its own contract (docs/contract.md and the pages it links): every
 * citation in it must lead somewhere a person who cloned it can read. This reads every tracked
 * text file and fails on a citation of a document that is not in the repository: the REST
 * contract and its decisions as they were kept outside it, anything under the sibling `shared`
 * directory, a `docs/` path or a Markdown link that names no file, and an issue number (an
 * issue tracker the repository does not carry).
 */

const root = resolve(import.meta.dirname, '..');

/** Citations that can never lead anywhere from a clone. The patterns are built so that this file does not match them. */
const FORBIDDEN: Array<{ pattern: RegExp; why: string }> = [
  { pattern: new RegExp(`\\b${'api'}\\.md\\b`), why: 'cites a contract file that is not in the repository: cite docs/contract.md' },
  { pattern: new RegExp(`\\b${'decisions'}\\.md\\b`), why: 'cites a decisions file that is not in the repository: cite docs/contract.md' },
  { pattern: new RegExp(`\\.\\./${'shared'}\\b`), why: 'points outside the repository (the sibling shared directory)' },
  { pattern: new RegExp(`\\b[Ii]${'ssue'}s? #?[0-9]`), why: 'cites an issue number: say what it was about instead' },
];

/**
 * The one use of the sibling directory that is no citation: CI on this kind of machine builds
 * Citus from the source kept beside the checkout (Citus's packages cannot be reached from it), and
 * only `.ci/run` may run that build. Docs and code never name it (docs/citus.md names Citus's
 * packages).
 */
const toolOfTheMachine = (file: string, text: string) => file === '.ci/run' && /^\s*bash \S+\/vendor\/citus\/build\.sh\s*$/.test(text);

/** `docs/...` paths, not inside a URL or another path (`https://host/docs/x`, `web/docs/x`). */
const DOCS_PATH = /(?<![\w./-])docs\/[\w./-]*/g;
/** Markdown link targets that are files of the repository (not URLs, mail or anchors). */
const MD_LINK = /\]\((?!https?:|mailto:|#)([^)\s]+)\)/g;

const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter((f) => f && f !== 'package-lock.json' && !/(^|\/)(node_modules|dist)\//.test(f));

/** Every offence as `file:line: why (the text)`. */
function offences(file: string): string[] {
  const bytes = readFileSync(join(root, file));
  if (bytes.includes(0)) return []; // binary (fixtures, images)
  const found: string[] = [];
  const note = (line: number, why: string, text: string) => found.push(`${file}:${line}: ${why} (${text.trim().slice(0, 120)})`);
  bytes
    .toString('utf8')
    .split('\n')
    .forEach((text, i) => {
      for (const { pattern, why } of FORBIDDEN) if (pattern.test(text) && !toolOfTheMachine(file, text)) note(i + 1, why, text);
      for (const [path] of text.matchAll(DOCS_PATH)) {
        const target = path.replace(/[./-]+$/, '');
        if (!existsSync(join(root, target))) note(i + 1, `names ${target}, which does not exist`, text);
      }
      if (!file.endsWith('.md')) return;
      for (const [, link] of text.matchAll(MD_LINK)) {
        const target = link!.split('#')[0]!;
        if (target && !existsSync(join(root, dirname(file), target))) note(i + 1, `links to ${target}, which does not exist`, text);
      }
    });
  return found;
}

/**
 * A section named in quotes after the document that holds it, as docs and comments cite one:
 * `docs/deployment.md, "Production mode"`, `bench/README.md ("Hooks")`, a link to the page then
 * the name, a second name joined by "and", the quote on the next line of a comment. README alone
 * is the README beside the file, else the repository's.
 */
const SECTION_REF = /([\w./-]*(?:\.md\b|\bREADME\b))[`)]*,?\s+(?:[*/#-]+\s+)?\(?("[^"\n]+"(?: and "[^"\n]+")*)/g;

/**
 * The names a document's sections go by: each heading (without its backticks), also without its
 * subtitle after ": " or a closing parenthesis (`## Hooks (bench/hooks.ts)` is "Hooks"), and each
 * paragraph's or item's bold lead (`**What becomes text**:`).
 */
function sectionNames(page: string): Set<string> {
  const text = readFileSync(join(root, page), 'utf8').replace(/^(`{3,})[\s\S]*?^\1/gm, '');
  const headings = [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]!.replaceAll('`', '').trim());
  const leads = [...text.matchAll(/^(?:[-*] )?\*\*(.+?)\*\*/gm)].map((m) => m[1]!.replace(/[.:]$/, ''));
  return new Set([...headings.flatMap((h) => [h, h.split(': ')[0]!, h.replace(/ \([^()]*\)$/, '')]), ...leads]);
}

/** Every quoted section name of `file` that its document does not have, as `file:line: why`. */
function missingSections(file: string): string[] {
  const bytes = readFileSync(join(root, file));
  if (bytes.includes(0)) return [];
  const text = bytes.toString('utf8');
  return [...text.matchAll(SECTION_REF)].flatMap((m) => {
    const where = `${file}:${text.slice(0, m.index).split('\n').length}`;
    const doc = m[1]!.endsWith('README') ? `${m[1]}.md` : m[1]!;
    const page = [join(dirname(file), doc), doc].map((p) => relative(root, join(root, p))).find((p) => existsSync(join(root, p)));
    const names = [...m[2]!.matchAll(/"([^"]+)"/g)].map((n) => n[1]!);
    if (!page) return [`${where}: names a section of ${doc}, which does not exist`];
    const sections = sectionNames(page);
    return names.filter((name) => !sections.has(name)).map((name) => `${where}: ${page} has no section "${name}"`);
  });
}

describe('citations (docs/contract.md)', () => {
  it('reads the tracked files', () => {
    // A broken listing would make the check below pass on nothing.
    expect(tracked).toContain('docs/contract.md');
    expect(tracked.length).toBeGreaterThan(100);
  });

  it('cites only documents inside the repository, and no issue numbers', () => {
    expect(tracked.flatMap(offences)).toEqual([]);
  });

  it('names in quotes only sections the document it names has', () => {
    // The pattern still finds the citations (a broken one would make the check pass on nothing).
    const cited = tracked.filter((f) => readFileSync(join(root, f), 'utf8').match(SECTION_REF));
    expect(cited).toEqual(expect.arrayContaining(['docs/architecture.md', 'docs/contract.md', 'src/core/config.ts']));
    expect(tracked.flatMap(missingSections)).toEqual([]);
  });
});
