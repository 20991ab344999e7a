import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
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

describe('citations (docs/contract.md)', () => {
  it('reads the tracked files', () => {
    // A broken listing would make the check below pass on nothing.
    expect(tracked).toContain('docs/contract.md');
    expect(tracked.length).toBeGreaterThan(100);
  });

  it('cites only documents inside the repository, and no issue numbers', () => {
    expect(tracked.flatMap(offences)).toEqual([]);
  });
});
