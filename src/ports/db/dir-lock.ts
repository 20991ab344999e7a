import { openSync, readFileSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Another live process holds the directory: `owner` is its pid. When that process is `orgmem
 * serve`, `orgmem mcp` and the admin commands go through it (host/server-file.ts).
 */
export class DataDirInUseError extends Error {
  constructor(
    readonly dir: string,
    readonly owner: number,
  ) {
    super(
      `The data directory ${dir} is in use by another orgmem process (pid ${owner}). ` +
        'Stop that process, or point ORGMEM_DATA_DIR at another directory, or use PostgreSQL (DATABASE_URL) to share one database between processes.',
    );
  }
}

/**
 * PGlite has no server to arbitrate between processes, and two processes writing one data
 * directory corrupt it. A lock file holding the owner's pid turns that into a clear error;
 * a lock left by a dead process is taken over.
 */
export function acquireDirLock(dir: string): () => void {
  const path = join(dir, 'orgmem.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          unlinkSync(path);
        } catch {
          // already gone: nothing to release
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSync(path, 'utf8'));
      if (owner && owner !== process.pid && isAlive(owner)) throw new DataDirInUseError(dir, owner);
      unlinkSync(path);
    }
  }
  throw new Error(`Could not lock the data directory ${dir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
