import { serverSettings } from './connection.mjs';
import { projectCollection } from './project.mjs';
import { PROMPT_MS, promptContext, SESSION_START_MS, sessionStartContext } from './recall.mjs';

/**
 * A hook: the harness's hook JSON on stdin, its answer on stdout (docs/hooks.md). A hook never
 * fails the turn: whatever goes wrong, it says so on stderr, prints nothing and exits 0.
 */

/** Hook input is small; a prompt with a pasted file is not. Beyond this the input is not read. */
const MAX_INPUT = 16 * 1024 * 1024;

async function readStdin() {
  const chunks = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += chunk.length;
    if (size > MAX_INPUT) throw new Error(`the hook input is over ${MAX_INPUT} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readPayload() {
  const parsed = JSON.parse(await readStdin());
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the hook input is not a JSON object');
  return parsed;
}

const str = (v) => (typeof v === 'string' && v ? v : undefined);

function server() {
  const settings = serverSettings();
  if (typeof settings === 'string') throw new Error(settings);
  return settings;
}

function answer(event, additionalContext) {
  if (additionalContext) process.stdout.write(`${JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext } })}\n`);
}

/**
 * Runs one event's hook; a deadline past the budget ends the process whatever still waits.
 * `captureArgs` start the background capture: the arguments to node that run this same entry as
 * the capture.
 */
export async function runHook(event, captureArgs) {
  const budget = event === 'SessionStart' ? SESSION_START_MS : event === 'UserPromptSubmit' ? PROMPT_MS : 2000;
  setTimeout(() => process.exit(0), budget + 500).unref();
  try {
    const payload = await readPayload();
    const target = server();
    const collection = projectCollection(str(payload.cwd) ?? process.cwd());
    const session_id = str(payload.session_id);
    if (event === 'SessionStart') return answer(event, await sessionStartContext(target, collection, session_id));
    if (event === 'UserPromptSubmit') return answer(event, await promptContext(target, collection, str(payload.prompt) ?? '', session_id));
    const transcript_path = str(payload.transcript_path);
    // Codex may have no transcript file; without one there is nothing to capture.
    if (!session_id || !transcript_path) return;
    // Loaded here: the recall hooks, which the harness waits for, start without it.
    const { captureInBackground } = await import('./capture.mjs');
    await captureInBackground(captureArgs, { session_id, transcript_path, hook_event_name: event, cwd: str(payload.cwd) ?? process.cwd() });
  } catch (err) {
    process.stderr.write(`orgmem hook ${event}: ${err.message}\n`);
  }
}

/** The background half of Stop, PreCompact and SessionEnd: stores the new turns and exits when done. */
export async function runCapture() {
  const { capture, logFailure } = await import('./capture.mjs');
  let session = 'unknown session';
  try {
    const payload = await readPayload();
    const target = server();
    const [session_id, transcript_path, hook_event_name] = [str(payload.session_id), str(payload.transcript_path), str(payload.hook_event_name)];
    if (!session_id || !transcript_path || !hook_event_name) throw new Error('the input needs session_id, transcript_path and hook_event_name');
    session = session_id;
    await capture(target, projectCollection(str(payload.cwd) ?? process.cwd()), { session_id, transcript_path, hook_event_name });
  } catch (err) {
    const message = `orgmem hook capture (${session}): ${err.message}`;
    logFailure(message);
    process.stderr.write(`${message}\n`);
    process.exitCode = 1;
  }
}
