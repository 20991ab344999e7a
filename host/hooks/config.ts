import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

/**
 * The hooks each harness runs, in its hooks.json format (docs/hooks.md): the one list the Claude
 * Code plugin's hooks/hooks.json and `orgmem hook install codex` are made from. Timeouts are the
 * harness's, in seconds; orgmem keeps far shorter budgets of its own (host/hooks/recall.ts).
 */
export const HOOK_EVENTS = [
  { event: 'SessionStart', timeout: 10, harnesses: ['claude-code', 'codex'] },
  { event: 'UserPromptSubmit', timeout: 5, harnesses: ['claude-code', 'codex'] },
  { event: 'Stop', timeout: 10, harnesses: ['claude-code', 'codex'] },
  { event: 'PreCompact', timeout: 10, harnesses: ['claude-code', 'codex'] },
  { event: 'SessionEnd', timeout: 10, harnesses: ['claude-code'] },
] as const;

export type HookEvent = (typeof HOOK_EVENTS)[number]['event'];
export type Harness = 'claude-code' | 'codex';

interface HookGroup {
  matcher?: string;
  hooks: { type: string; command?: string; timeout?: number }[];
}
type HooksFile = { hooks?: Record<string, HookGroup[]> } & Record<string, unknown>;

const COMMAND = 'orgmem hook';

export function hooksConfig(harness: Harness): { hooks: Record<string, HookGroup[]> } {
  const hooks: Record<string, HookGroup[]> = {};
  for (const { event, timeout, harnesses } of HOOK_EVENTS) {
    if ((harnesses as readonly Harness[]).includes(harness)) hooks[event] = [{ hooks: [{ type: 'command', command: `${COMMAND} ${event}`, timeout }] }];
  }
  return { hooks };
}

/** Codex's hooks.json: $CODEX_HOME/hooks.json (default ~/.codex), or the project's .codex/hooks.json. */
export function codexHooksPath(project: string | undefined): string {
  if (project) return join(project, '.codex', 'hooks.json');
  const codexHome = process.env.CODEX_HOME;
  const home = codexHome && isAbsolute(codexHome) ? codexHome : join(homedir(), '.codex');
  return join(home, 'hooks.json');
}

/**
 * Writes orgmem's hooks into a hooks.json, keeping every other hook in it and replacing the
 * orgmem ones an earlier install wrote. A file that is not a JSON object is left alone (an error).
 */
export function installHooks(path: string, harness: Harness): void {
  let file: HooksFile = {};
  if (existsSync(path)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(path, 'utf8'));
    } catch (err) {
      throw new Error(`${path} is not valid JSON (${(err as Error).message}); fix or move it first`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${path} is not a JSON object; fix or move it first`);
    file = parsed as HooksFile;
  }
  const hooks: Record<string, HookGroup[]> = { ...file.hooks };
  const ours = (g: HookGroup) => Array.isArray(g?.hooks) && g.hooks.length > 0 && g.hooks.every((h) => h.command?.startsWith(`${COMMAND} `));
  for (const [event, groups] of Object.entries(hooksConfig(harness).hooks)) {
    hooks[event] = [...(Array.isArray(hooks[event]) ? hooks[event] : []).filter((g) => !ours(g)), ...groups];
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify({ ...file, hooks }, null, 2)}\n`);
}
