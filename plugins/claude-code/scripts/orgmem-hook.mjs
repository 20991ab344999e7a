#!/usr/bin/env node
// The Claude Code plugin's hook, and `orgmem hook <event>`'s too: `node orgmem-hook.mjs <event>`
// with the harness's JSON on stdin (docs/hooks.md). Node's own modules only, so that the plugin
// runs as installed, without npm, and a hook starts in the time of Node itself.
import { HOOK_EVENTS } from './events.mjs';
import { runCapture, runHook } from './run.mjs';

const [name] = process.argv.slice(2);
const event = HOOK_EVENTS.find((e) => e.event === name)?.event;
if (name === 'capture') await runCapture();
else if (event) await runHook(event, [process.argv[1], 'capture']);
else {
  // Not 2: Claude Code takes a hook's exit code 2 as "block the turn".
  process.stderr.write(`orgmem hook: '${name ?? ''}' is not an event; one of ${[...HOOK_EVENTS.map((e) => e.event), 'capture'].join(', ')}\n`);
  process.exitCode = 1;
}
