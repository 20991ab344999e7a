import type { HookEvent } from '../../plugins/claude-code/scripts/events.mjs';
import { HELP, type Command } from './command.ts';

// The hooks are the Claude Code plugin's script (plugins/claude-code/scripts/): `orgmem hook
// <event>` runs the same code, which loads nothing but Node's own modules, so that a hook starts
// in the time of Node itself (bench/README.md, "Hooks").

const ENV = `The server and key: ORGMEM_URL and ORGMEM_API_KEY when set, else the connection file
that orgmem connect writes ($XDG_CONFIG_HOME/orgmem/connection.json, default ~/.config/orgmem).
  ORGMEM_COLLECTION   the collection (default: the project's, from its git remote or directory)
`;

const event = (name: HookEvent, what: string): Command => ({
  usage: `Usage: orgmem hook ${name}

${what} Reads the hook's JSON on stdin; exits 0 whatever happens (a problem goes to stderr).

${ENV}
Options:
${HELP}`,
  async run() {
    const { runHook } = await import('../../plugins/claude-code/scripts/run.mjs');
    return runHook(name, [process.argv[1]!, 'hook', 'capture']);
  },
});

const CAPTURE = 'Hands the new turns of the transcript to a background capture and returns at once.';

export const hook: Command = {
  usage: `Usage: orgmem hook EVENT

Hooks for Claude Code and Codex (docs/hooks.md): recall into the prompt and capture the session
without the model deciding to. orgmem connect claude-code and orgmem connect codex install them.

Events:
  SessionStart        the project's profile and memories as context
  UserPromptSubmit    the memories recalled for the prompt as context
  Stop, PreCompact, SessionEnd
                      capture the new turns of the transcript through remember, in the background
  capture             that background capture itself (run by the three above)

${ENV}
Options:
${HELP}`,
  subcommands: {
    SessionStart: event('SessionStart', "Answers the project's profile and memories as additionalContext."),
    UserPromptSubmit: event('UserPromptSubmit', 'Answers the memories recalled for the prompt as additionalContext.'),
    Stop: event('Stop', CAPTURE),
    PreCompact: event('PreCompact', CAPTURE),
    SessionEnd: event('SessionEnd', CAPTURE),
    capture: {
      usage: `Usage: orgmem hook capture

Stores the turns of a transcript not stored yet (a hook's JSON on stdin: session_id,
transcript_path, hook_event_name, cwd) and exits when done; failures also go to errors.log in
$XDG_STATE_HOME/orgmem/hooks (default ~/.local/state/orgmem/hooks).

${ENV}
Options:
${HELP}`,
      async run() {
        const { runCapture } = await import('../../plugins/claude-code/scripts/run.mjs');
        return runCapture();
      },
    },
  },
};
