import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** The pages whose code blocks must each be run by a test or say why not: the README and docs/. */
export const DOC_PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

export type MarkerKind = 'snippet' | 'mcp-config' | 'not-run';

export interface DocBlock {
  /** Path from the project root, e.g. `docs/mcp.md`. */
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's info string (`sh`, `json`, `ts`...), '' when there is none. */
  lang: string;
  code: string;
  /** The `<!-- kind: value -->` comment on the line right above the fence, if any. */
  marker: { kind: MarkerKind; value: string } | null;
}

const MARKER = /^\s*<!-- (snippet|mcp-config|not-run): (.+?) -->\s*$/;

/** Every fenced code block of a markdown page, with the marker above it. */
function codeBlocks(page: string): DocBlock[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    const end = lines.findIndex((l, j) => j > i && l.startsWith(indent!) && l.trim().startsWith(fence!) && l.trim().replaceAll(fence![0]!, '') === '');
    if (end < 0) throw new Error(`${page}:${i + 1}: a code block that is never closed`);
    const marked = i > 0 ? MARKER.exec(lines[i - 1]!) : null;
    blocks.push({
      page,
      line: i + 1,
      lang: lang!,
      code: lines
        .slice(i + 1, end)
        .map((l) => l.slice(indent!.length))
        .join('\n'),
      marker: marked ? { kind: marked[1] as MarkerKind, value: marked[2]! } : null,
    });
    i = end;
  }
  return blocks;
}

export const allBlocks = () => DOC_PAGES.flatMap(codeBlocks);

/** The one block marked `<!-- kind: name -->` across the README and docs/. */
export function markedBlock(kind: MarkerKind, name: string): DocBlock {
  const found = allBlocks().filter((b) => b.marker?.kind === kind && b.marker.value === name);
  if (found.length !== 1) throw new Error(`expected one block marked <!-- ${kind}: ${name} --> in ${DOC_PAGES.join(', ')}, found ${found.length}`);
  return found[0]!;
}
