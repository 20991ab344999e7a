import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataDirInUseError } from '../src/ports/db/dir-lock.ts';

/**
 * Where an `orgmem serve` holding an embedded data directory listens, written into that directory
 * beside its lock (`orgmem.lock`): the other commands cannot open data a live process holds, so
 * `orgmem mcp` goes through the server found here instead of guessing its address, and the admin
 * commands call its local admin endpoints (procedures/internal.create-*.ts) with `secret`. The file is the
 * owner's only (0600): whoever can read the data directory owns the data anyway.
 */
export interface ServerFile {
  /** The address a client on this machine reaches the server at. */
  url: string;
  pid: number;
  /** The X-Local-Admin-Secret of its local admin endpoints, made for this run of the server. */
  secret: string;
}

export const SERVER_FILE = 'server.json';

export const newLocalSecret = () => randomBytes(32).toString('base64url');

/** Written whole or not at all (a reader never sees half a file); answers what removes it, if it is still this process's. */
export function writeServerFile(dataDir: string, server: ServerFile): () => void {
  const path = join(dataDir, SERVER_FILE);
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify(server), { mode: 0o600 });
  renameSync(partial, path);
  const remove = () => {
    if (readServerFile(dataDir)?.pid !== process.pid) return;
    try {
      unlinkSync(path);
    } catch {
      // already gone: nothing to remove
    }
  };
  // Also when the process ends without closing: a crash must not leave an address that looks current.
  process.once('exit', remove);
  return remove;
}

function readServerFile(dataDir: string): ServerFile | null {
  try {
    const file = JSON.parse(readFileSync(join(dataDir, SERVER_FILE), 'utf8')) as Partial<ServerFile>;
    return typeof file.url === 'string' && typeof file.pid === 'number' && typeof file.secret === 'string' ? (file as ServerFile) : null;
  } catch {
    return null;
  }
}

/**
 * The server holding the directory, when the process holding it is an `orgmem serve` that wrote
 * its file; null for any other holder (`orgmem mcp`, a worker, a migration, a server still
 * starting), or a file left by a process that is gone.
 */
export function serverHolding(inUse: DataDirInUseError): ServerFile | null {
  const file = readServerFile(inUse.dir);
  return file?.pid === inUse.owner ? file : null;
}
