/**
 * A table of a TOML file (Codex's config.toml), put in and taken out as text: a TOML table runs
 * from its header to the next header, so orgmem's table and its subtables come out and go in and
 * every other line of the file, comments included, stays as the user wrote it. The same table
 * written another way (an inline table, dotted keys) is not edited: an error says so.
 */

const HEADER = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$/;
const KEY_LINE = /^\s*([A-Za-z0-9_\-."' ]+?)\s*=/;

/** `mcp_servers."orgmem"` and `mcp_servers . orgmem` are `mcp_servers.orgmem`. */
const dotted = (raw: string) =>
  raw
    .split('.')
    .map((p) => p.trim().replace(/^"(.*)"$|^'(.*)'$/, '$1$2'))
    .join('.');

/** A TOML string: a JSON string's escapes are all TOML basic string escapes. */
export const tomlString = (s: string) => JSON.stringify(s);

/** The text without table `name` and its subtables; `found` says whether it was there. */
export function withoutTable(path: string, text: string, name: string): { text: string; found: boolean } {
  const ours = (key: string) => key === name || key.startsWith(`${name}.`);
  const kept: string[] = [];
  let table = '';
  let found = false;
  for (const line of text.split('\n')) {
    const header = HEADER.exec(line);
    if (header) {
      table = dotted(header[1]!);
      found ||= ours(table);
    } else if (!ours(table)) {
      const key = KEY_LINE.exec(line)?.[1];
      if (key && ours(table ? `${table}.${dotted(key)}` : dotted(key)))
        throw new Error(`${path} sets ${name} in a form orgmem connect does not edit (an inline table or dotted keys); remove it there and run again`);
    }
    if (!ours(table)) kept.push(line);
  }
  return { text: kept.join('\n').replace(/\n{2,}$/, '\n'), found };
}

/** The text with table `name` holding `lines` (`key = value`), in place of any earlier one, at the end. */
export function withTable(path: string, text: string, name: string, lines: string[]): string {
  const rest = withoutTable(path, text, name).text.trimEnd();
  return `${rest ? `${rest}\n\n` : ''}[${name}]\n${lines.join('\n')}\n`;
}
