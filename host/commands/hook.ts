import type { HookEvent } from '../hooks/config.ts';
import { HELP, UsageError, type Command } from './command.ts';

// The event commands load only the hook client (host/hooks/): no database, no embedder, no
// server code, so that a hook starts in the time of Node itself (bench/README.md, "Hooks").

const ENV = `Environment (Claude Code and Codex pass theirs to the hooks):
  ORGMEM_URL          the running orgmem server (required)
  ORGMEM_API_KEY      the API key the memories are read and written with (required)
  ORGMEM_COLLECTION   the collection (default: the project's, from its git remote or directory)
`;

const event = (name: HookEvent, what: string): Command => ({
  usage: `Usage: orgmem hook ${name}

${what} Reads the hook's JSON on stdin; exits 0 whatever happens (a problem goes to stderr).

${ENV}
Options:
${HELP}`,
  async run() {
    const { runHook } = await import('../hooks/run.ts');
    return runHook(name);
  },
});

const CAPTURE = 'Hands the new turns of the transcript to a background capture and returns at once.';

const codex: Command = {
  usage: `Usage: orgmem hook install codex [--project DIR]

Writes orgmem's hooks into Codex's hooks.json: $CODEX_HOME/hooks.json (default ~/.codex/hooks.json),
or DIR/.codex/hooks.json with --project. Other hooks in the file are kept; orgmem's are replaced.

Options:
      --project DIR   the project's .codex/hooks.json instead of the user's
${HELP}`,
  options: { project: { type: 'string' } },
  async run(values) {
    if (values.project === '') throw new UsageError('--project needs a directory');
    const { codexHooksPath, installHooks } = await import('../hooks/config.ts');
    const path = codexHooksPath(values.project as string | undefined);
    installHooks(path, 'codex');
    process.stdout.write(
      `orgmem's hooks are in ${path}.\nSet ORGMEM_URL and ORGMEM_API_KEY in the environment Codex starts from, then review and trust the hooks in Codex (/hooks).\n`,
    );
  },
};

export const hook: Command = {
  usage: `Usage: orgmem hook [<event> | install codex]

Hooks for Claude Code and Codex (docs/hooks.md): recall into the prompt and capture the session
without the model deciding to.

Events:
  SessionStart        the project's profile and memories as context
  UserPromptSubmit    the memories recalled for the prompt as context
  Stop, PreCompact, SessionEnd
                      capture the new turns of the transcript through remember, in the background
  capture             that background capture itself (run by the three above)

  install codex       write the hooks into Codex's hooks.json

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
        const { runCapture } = await import('../hooks/run.ts');
        return runCapture();
      },
    },
    install: { usage: `Usage: orgmem hook install codex [--project DIR]\n\nOptions:\n${HELP}`, subcommands: { codex } },
  },
};
