/**
 * The hooks each harness runs, in the hooks.json format Claude Code and Codex share
 * (docs/hooks.md): the one list the plugin's hooks/hooks.json and `orgmem connect` are made
 * from. Timeouts are the harness's, in seconds; orgmem keeps far shorter budgets of its own
 * (recall.mjs).
 */
export const HOOK_EVENTS = [
  { event: 'SessionStart', timeout: 10, harnesses: ['claude-code', 'codex'] },
  { event: 'UserPromptSubmit', timeout: 5, harnesses: ['claude-code', 'codex'] },
  { event: 'Stop', timeout: 10, harnesses: ['claude-code', 'codex'] },
  { event: 'PreCompact', timeout: 10, harnesses: ['claude-code', 'codex'] },
  { event: 'SessionEnd', timeout: 10, harnesses: ['claude-code'] },
];

/** The hook script, in the plugin as Claude Code names its directory: what the plugin's hooks.json runs. */
export const PLUGIN_SCRIPT = '${CLAUDE_PLUGIN_ROOT}/scripts/orgmem-hook.mjs';

/** The command that runs `script` (this directory's orgmem-hook.mjs, wherever it is) for an event. */
export const hookCommand = (script, event) => `node "${script}" ${event}`;

/** The `hooks` of a hooks.json that runs `script` for each of the harness's events. */
export function hooksConfig(harness, script) {
  const hooks = {};
  for (const { event, timeout, harnesses } of HOOK_EVENTS) {
    if (harnesses.includes(harness)) hooks[event] = [{ hooks: [{ type: 'command', command: hookCommand(script, event), timeout }] }];
  }
  return { hooks };
}
