import { spawn } from 'node:child_process';
import { appendFileSync, closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { call, collectionPath, HttpError } from './client.mjs';
import { readTurns, turnTexts } from './transcript.mjs';

/**
 * Capture (docs/hooks.md, "Capture"): the turns of the transcript not stored yet go to remember,
 * one remember per turn (cut at remember's size), each named by an idempotency key made of the
 * session id and the turn's byte offset. The server keeps the keys (docs/contract.md, "Retries
 * and idempotency"), so a hook sent twice, two hooks at once or a lost cursor store nothing twice;
 * the cursor file (how far this machine got) only saves sending the earlier turns again.
 */

/** At most this much of a transcript is read by one capture; the next event goes on from there. */
const READ_LIMIT = 32 * 1024 * 1024;
const REMEMBER_MS = 30_000;

/** $XDG_STATE_HOME/orgmem/hooks, else ~/.local/state/orgmem/hooks. */
export function stateDir() {
  const xdg = process.env.XDG_STATE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.local', 'state');
  return join(base, 'orgmem', 'hooks');
}

const safeId = (id) => id.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 128);

/**
 * Runs the capture in a process of its own, `node ...args` (the same entry the hook was started
 * from, with the arguments that make it the capture), the payload on its stdin, and returns at once.
 */
export function captureInBackground(args, payload) {
  const child = spawn(process.execPath, args, { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  child.unref();
  return new Promise((done) => child.stdin.end(JSON.stringify(payload), () => done()));
}

function readCursor(file, transcript) {
  try {
    const c = JSON.parse(readFileSync(file, 'utf8'));
    return c.transcript_path === transcript && Number.isSafeInteger(c.offset) && c.offset >= 0 ? c.offset : 0;
  } catch {
    return 0;
  }
}

function writeCursor(file, cursor) {
  writeFileSync(`${file}.tmp`, JSON.stringify(cursor));
  renameSync(`${file}.tmp`, file);
}

/** The transcript from `offset` on (at most READ_LIMIT bytes); from 0 when the file is now shorter. */
function readFrom(path, offset) {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const base = size < offset ? 0 : offset;
    const bytes = Buffer.alloc(Math.min(size - base, READ_LIMIT));
    let got = 0;
    while (got < bytes.length) {
      const n = readSync(fd, bytes, got, bytes.length - got, base + got);
      if (n === 0) break;
      got += n;
    }
    return { base, bytes: bytes.subarray(0, got) };
  } finally {
    closeSync(fd);
  }
}

/** An instant remember takes as observed_at: ISO 8601 with a zone. */
const instant = (at) => (at && /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(at) && !Number.isNaN(Date.parse(at)) ? at : undefined);

/**
 * Stores the turns after the cursor and moves it past them. A Stop's last turn waits for the next
 * event until the assistant's answer is in the file. Answers how many turns were sent.
 */
export async function capture(server, collection, payload, dir = stateDir()) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const cursorFile = join(dir, `${safeId(payload.session_id)}.json`);
  const { base, bytes } = readFrom(payload.transcript_path, readCursor(cursorFile, payload.transcript_path));
  const turns = readTurns(bytes, base);
  const last = turns.at(-1);
  const waiting = payload.hook_event_name === 'Stop' && last && !last.assistant.length ? last : undefined;
  const ready = waiting ? turns.slice(0, -1) : turns;
  const lineEnd = base + bytes.lastIndexOf(0x0a) + 1;
  let sent = 0;
  try {
    for (const turn of ready) {
      await rememberTurn(server, collection, payload.session_id, turn);
      sent += 1;
    }
  } finally {
    const next = ready[sent] ?? waiting;
    writeCursor(cursorFile, { transcript_path: payload.transcript_path, offset: next ? next.offset : Math.max(lineEnd, base) });
  }
  return sent;
}

async function rememberTurn(server, collection, sessionId, turn) {
  const observed_at = instant(turn.at);
  for (const [i, content] of turnTexts(turn).entries()) {
    const key = `hook:${safeId(sessionId)}:${turn.offset}${i ? `:${i}` : ''}`;
    try {
      await call(server, 'POST', collectionPath(collection, 'remember'), {
        body: { content, ...(observed_at ? { observed_at } : {}) },
        headers: { 'idempotency-key': key },
        session: sessionId,
        signal: AbortSignal.timeout(REMEMBER_MS),
      });
    } catch (err) {
      // The key was stored with other text (the turn was captured before it grew): it is kept as it was.
      if (err instanceof HttpError && err.status === 422 && /Idempotency-Key was used with another body/.test(err.message)) continue;
      // A text the server refuses would be refused at every event: it is skipped, and said so, rather
      // than holding back every turn after it. Any other failure keeps the turn for the next event.
      if (err instanceof HttpError && err.status === 422) {
        logFailure(`orgmem hook capture (${sessionId}): turn at byte ${turn.offset} skipped: ${err.message}`);
        continue;
      }
      throw err;
    }
  }
}

/** A background capture has no one to tell: its failures go to errors.log in the state directory (docs/hooks.md). */
export function logFailure(message, dir = stateDir()) {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    appendFileSync(join(dir, 'errors.log'), `${new Date().toISOString()} ${message}\n`);
  } catch {
    // nowhere left to write it
  }
}
