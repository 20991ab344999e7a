import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * One orgmem process of the run (an API process or the worker) that can be killed with SIGKILL
 * and started again in its place. Its output goes to `<logDir>/<name>.log`, every life appended,
 * so a failed run can be read afterwards.
 */
export class OrgmemProcess {
  private child: ChildProcess | null = null;
  kills = 0;
  readonly log: string;

  constructor(
    readonly name: string,
    private readonly args: string[],
    private readonly env: Record<string, string>,
    logDir: string,
    /** The API's base URL; null for the worker, which has nothing to ask. */
    readonly url: string | null,
  ) {
    this.log = join(logDir, `${name}.log`);
  }

  /** Starts the process; an API process counts as started once its health endpoint answers. */
  async start(): Promise<void> {
    if (this.url && (await healthy(this.url))) throw new Error(`${this.url} is already in use: pass another --port`);
    const out = createWriteStream(this.log, { flags: 'a' });
    const child = spawn(process.execPath, ['bin/orgmem.js', ...this.args], {
      cwd: ROOT,
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    this.child = child;
    if (!this.url) return;
    for (let i = 0; !(await healthy(this.url)); i++) {
      if (child.exitCode !== null) throw new Error(`${this.name} exited with ${child.exitCode} while starting (see ${this.log})`);
      if (i > 240) throw new Error(`${this.name} did not answer its health check within a minute (see ${this.log})`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** kill -9, as a crash or the OOM killer would: no shutdown handler runs. */
  async kill(): Promise<void> {
    if (await this.signal('SIGKILL')) this.kills++;
  }

  /** A clean stop (SIGTERM), waiting for the process to exit. */
  async stop(): Promise<void> {
    await this.signal('SIGTERM');
  }

  /** Sends `sig` to a running process and waits for it to exit; false when none was running. */
  private async signal(sig: NodeJS.Signals): Promise<boolean> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return false;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(sig);
    await exited;
    return true;
  }

  /** Lines of this process's log (all its lives) that contain `text`. */
  logLines(text: string): string[] {
    return readFileSync(this.log, 'utf8')
      .split('\n')
      .filter((l) => l.includes(text));
  }
}

const healthy = (url: string) =>
  fetch(`${url}/v1/memory/health`, { signal: AbortSignal.timeout(2_000) }).then(
    (r) => r.ok,
    () => false,
  );
